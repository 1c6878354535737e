/** What a person is shown of an interrupt: the one description every face renders, and whether a face with limits may offer Approve. */
export type { CallCard, CardBlock, CardPart, FaceLimits, InterruptCard } from "./card-types.js";
export { callCard, type CardSource, interruptCard, shownJson } from "./interrupt-card.js";
export { callParts, headParts, partsText } from "./card-parts.js";
export { fitCard, layOutCard, NO_LIMITS, showsWhole, splitText } from "./card-layout.js";

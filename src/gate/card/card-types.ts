/** One call as every face shows it: the strings are the card's, each face only wraps them in its own markup. */
export interface CallCard {
  call_id: string;
  name: string;
  version: number;
  /** Who must decide it, in words: "Needs 2 of finance — approved by fin1, waiting for 1 more of finance". */
  policy: string;
  /** The arguments, masked, as indented JSON. */
  args: string;
  /** The preview as indented JSON, when the tool gave one. */
  preview?: string;
  /** Why the tool's preview could not be shown (masked, as every error text). */
  preview_error?: string;
}

/** What a person is shown of an interrupt, on every face that shows it. */
export interface InterruptCard {
  thread_id: string;
  interrupt_id: string;
  /** The thread owner's `sub`, where the face knows it. */
  requested_by?: string;
  /** Where the interrupt stands, in a few words: "Approval needed", "Partly approved", "Decided", "Expired"… */
  headline: string;
  /** The tools its calls name, once each, in order. */
  tools: string[];
  /** Whether it still waits for decisions (a face offers its buttons only then). */
  open: boolean;
  /** ISO 8601. */
  expires_at: string;
  /** Open: "decide by <deadline>"; closed: who decided what and when, or when it expired or was cancelled. */
  status: string;
  calls: CallCard[];
  /** call id → version, as the card shows them: what a decision taken on it names. */
  versions: Record<string, number>;
}

/**
 * One piece of a card in the order it is read. A face renders each kind in its own markup (a
 * heading, a line, a label, preformatted text) and never parses `text` as markup.
 */
export type CardPart = { kind: "title" | "text" | "label" | "code"; text: string };

/** Parts a face with limits shows together (a Slack block), of the card's head or of one call. */
export interface CardBlock {
  /** The call the parts belong to; none: the card's head. */
  call_id?: string;
  parts: CardPart[];
}

/** What a face can hold: blocks in all, and characters a text (a block's parts together hold no more). */
export interface FaceLimits {
  maxBlocks: number;
  maxChars: number;
}

export { abortableSleep } from "./abortable-sleep.js";
export { escapeRegExp } from "./escape-reg-exp.js";
export { LinkedAbortController } from "./linked-abort.js";

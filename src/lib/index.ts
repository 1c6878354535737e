export { abortableSleep } from "./abortable-sleep.js";

/**
 * Names that can never be an argument: merging them would reach the object's prototype, and a
 * JSON parser or validator may drop them silently, so they are refused wherever an edit is read.
 */
export const RESERVED_ARG_NAMES: ReadonlySet<string> = new Set(["__proto__", "constructor", "prototype"]);

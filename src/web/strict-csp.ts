/**
 * Imported first by main.tsx. zod compiles object parsers with `new Function` unless told not to;
 * it probes for that at load, and under this page's Content Security Policy (no `unsafe-eval`)
 * the probe is a CSP violation on every load. Parsing works the same without it.
 */
import { z } from "zod";

z.config({ jitless: true });

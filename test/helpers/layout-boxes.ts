/**
 * Geometry for layout tests: the boxes of the page's parts, read in one snapshot (the page
 * re-renders on its own, e.g. the inbox poll, so two separate reads could see two layouts), and
 * which of them overlap.
 */
import type { Page } from "playwright-core";

/** A box in CSS pixels, named so a failure says which part it is. */
export interface Box {
  name: string;
  x: number;
  y: number;
  width: number;
  height: number;
}

/** What a person taps or tabs to. */
const CONTROLS = 'a[href], button, input, textarea, select, [tabindex]:not([tabindex="-1"])';

/** A part of the page: its CSS selector and the name a failure calls it by. */
export interface Part {
  css: string;
  name: string;
}

export interface LayoutSnapshot {
  /** For each part asked for, the whole box of every element it matches (clipped out of sight or not). */
  parts: Box[][];
  /** The controls a person can see: each box cut to its scrolling ancestors, the hidden ones left out. */
  controls: Box[];
}

/** Reads the boxes of some parts of the page and of every visible control, all at once. */
export async function layoutSnapshot(page: Page, parts: Part[]): Promise<LayoutSnapshot> {
  const snap = await page.evaluate(
    ({ parts, controls }) => {
      const partBoxes = parts.map((part) =>
        Array.from(document.querySelectorAll(part.css)).map((el, i, all) => {
          const r = el.getBoundingClientRect();
          const label = el.getAttribute("data-thread-id") ?? el.textContent?.trim().slice(0, 40);
          const name = all.length === 1 ? part.name : `${part.name} ${i + 1} of ${all.length} (${label})`;
          return { name, x: r.x, y: r.y, width: r.width, height: r.height };
        }),
      );
      const controlBoxes = [];
      for (const el of Array.from(document.querySelectorAll(controls))) {
        if (getComputedStyle(el).visibility === "hidden") continue;
        const r = el.getBoundingClientRect();
        let [left, top, right, bottom] = [r.left, r.top, r.right, r.bottom];
        // A scrolling ancestor hides what lies outside it: only the part a person sees can collide.
        for (let a = el.parentElement; a; a = a.parentElement) {
          const s = getComputedStyle(a);
          if (s.overflowX === "visible" && s.overflowY === "visible") continue;
          const c = a.getBoundingClientRect();
          [left, top, right, bottom] = [Math.max(left, c.left), Math.max(top, c.top), Math.min(right, c.right), Math.min(bottom, c.bottom)];
        }
        if (right - left < 1 || bottom - top < 1) continue;
        const label = el.getAttribute("aria-label") || el.textContent?.trim().slice(0, 30) || el.getAttribute("placeholder") || el.id;
        controlBoxes.push({ name: `${el.tagName.toLowerCase()} "${label}"`, x: left, y: top, width: right - left, height: bottom - top });
      }
      return { parts: partBoxes, controls: controlBoxes };
    },
    { parts, controls: CONTROLS },
  );
  const missing = parts.filter((_, i) => snap.parts[i]!.length === 0).map((p) => `${p.name} (${p.css})`);
  if (missing.length > 0) throw new Error(`nothing on the page matches ${missing.join(", ")}`);
  return snap;
}

/** Layout rounding can make two boxes share an edge by a fraction of a pixel; that is not an overlap. */
const SLACK_PX = 0.5;

function intersect(a: Box, b: Box): boolean {
  const w = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
  const h = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
  return w > SLACK_PX && h > SLACK_PX;
}

function show(b: Box): string {
  const r = (n: number) => Math.round(n * 10) / 10;
  return `${b.name} [x ${r(b.x)}, y ${r(b.y)}, ${r(b.width)}×${r(b.height)}]`;
}

/** Each overlapping pair, one of `a` and one of `b`, as "<box> overlaps <box>". */
export function overlapsBetween(a: Box[], b: Box[]): string[] {
  return a.flatMap((x) => b.filter((y) => intersect(x, y)).map((y) => `${show(x)} overlaps ${show(y)}`));
}

/** Each overlapping pair within `boxes`. */
export function overlapsWithin(boxes: Box[]): string[] {
  return boxes.flatMap((x, i) => overlapsBetween([x], boxes.slice(i + 1)));
}

/**
 * Whether the object behind `ref` has been garbage-collected once nothing else holds it: full
 * collections, with a turn of the event loop before each (a WeakRef keeps its target alive until
 * the job that last read it is over).
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

export async function collected(ref: WeakRef<object>): Promise<boolean> {
  for (let i = 0; i < 3 && ref.deref() !== undefined; i++) {
    await new Promise((resolve) => setImmediate(resolve));
    gc();
  }
  return ref.deref() === undefined;
}

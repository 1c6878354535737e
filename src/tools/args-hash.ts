// The argument hashes an approval binds are the gate's; tools and the stores read them from there.
export { canonicalJson, hashArgs } from "../gate/index.js";

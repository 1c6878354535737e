export { ANONYMOUS, hasRole, isRole, ROLES } from "./principal.js";
export type { Principal, Role } from "./principal.js";
export { Access } from "./access.js";
export type { ThreadFacts } from "./access.js";
export { createAuthenticator } from "./authenticator.js";
export type { Authenticator, AuthSettings } from "./authenticator.js";
export type { JwtSettings } from "./jwt-verifier.js";

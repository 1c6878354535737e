/** The roles of the contract. A principal may hold several. */
export const ROLES = ["user", "approver", "metrics", "admin"] as const;
export type Role = (typeof ROLES)[number];

export function isRole(v: unknown): v is Role {
  return typeof v === "string" && (ROLES as readonly string[]).includes(v);
}

/** Who is calling: a static token's principal, a verified JWT's subject, or `anonymous`. */
export interface Principal {
  sub: string;
  /** The contract's roles, and any declared in AUTH_ROLES (a quorum may name one). */
  roles: readonly string[];
}

/** Every request with auth off: one local user who may do everything. */
export const ANONYMOUS: Principal = Object.freeze({ sub: "anonymous", roles: Object.freeze([...ROLES]) });

export const hasRole = (p: Principal, role: string): boolean => p.roles.includes(role);

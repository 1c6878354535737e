/** The part of a validation issue a message needs; zod's issues and Standard Schema issues both fit. */
export interface IssueLike {
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }>;
  readonly message: string;
}

export interface IssueFormat {
  /** At most this many issues are named (a client's body may have hundreds). */
  max?: number;
  /** Each path segment is cut to this many characters, so a message echoes little of the input. */
  clip?: number;
  /** Only the first path segment is named (a config variable, never a path into its value). */
  firstSegmentOnly?: boolean;
  /** What an issue about the whole value is called; without it such an issue is its message alone. */
  root?: string;
}

/**
 * The one way tollgate words validation failures: `path.to.field: message` joined by `; `. Server
 * bodies, config, tool arguments and the client's event parser all use it, each with its limits.
 */
export function formatIssues(issues: readonly IssueLike[], o: IssueFormat = {}): string {
  return issues
    .slice(0, o.max ?? issues.length)
    .map((issue) => {
      let segments = (issue.path ?? []).map((p) => String(typeof p === "object" ? p.key : p));
      if (o.firstSegmentOnly) segments = segments.slice(0, 1);
      if (o.clip !== undefined) segments = segments.map((s) => clip(s, o.clip!));
      const where = segments.join(".") || o.root;
      return where ? `${where}: ${issue.message}` : issue.message;
    })
    .join("; ");
}

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}…` : s);

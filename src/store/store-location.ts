/** Where a store keeps its data, fit for a log line: never a password. */
export type StoreLocation = { kind: "sqlite"; dataDir: string } | { kind: "postgres"; database: string };

/** The location the settings name: the SQLite data dir, or the database URL without its secrets. */
export function storeLocation(s: { dataDir: string; databaseUrl?: string }): StoreLocation {
  if (!s.databaseUrl) return { kind: "sqlite", dataDir: s.dataDir };
  return { kind: "postgres", database: databaseWithoutSecrets(s.databaseUrl) };
}

/**
 * `postgres://user@host:port/database`: the password is dropped, and so is the query, which may
 * carry one too (`?password=`) or the paths of keys.
 */
export function databaseWithoutSecrets(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    // Nothing of a URL that does not parse can be shown safely.
    return "(a database URL that does not parse)";
  }
  return `${u.protocol}//${u.username ? `${u.username}@` : ""}${u.host}${u.pathname}`;
}

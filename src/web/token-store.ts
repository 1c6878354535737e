/**
 * The bearer token a person pasted, kept in sessionStorage: it lives as long as the tab, survives
 * a reload, and is never written anywhere a later visitor of the machine would find it.
 */
const KEY = "tollgate.token";

export function readToken(): string | undefined {
  try {
    return sessionStorage.getItem(KEY) || undefined;
  } catch {
    return undefined; // storage disabled: the person signs in again after a reload
  }
}

export function writeToken(token: string | undefined): void {
  try {
    if (token) sessionStorage.setItem(KEY, token);
    else sessionStorage.removeItem(KEY);
  } catch {
    // storage disabled: the token lives in memory only
  }
}

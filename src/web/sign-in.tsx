import { useState, type FormEvent } from "react";

/** Shown when the server wants a token: paste one, it is kept for this tab only. */
export function SignIn({ rejected, onSignIn }: { rejected: boolean; onSignIn: (token: string) => void }) {
  const [token, setToken] = useState("");
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (token.trim()) onSignIn(token.trim());
  };
  return (
    <main className="sign-in" aria-label="Sign in">
      <h1>tollgate</h1>
      <form onSubmit={submit}>
        <p>This server needs a bearer token. It is kept in this tab only (sessionStorage).</p>
        {rejected ? (
          <p role="alert" data-testid="request-error" className="error">
            The server did not accept that token.
          </p>
        ) : null}
        <label htmlFor="token">Bearer token</label>
        <input id="token" type="password" autoComplete="off" value={token} onChange={(e) => setToken(e.target.value)} autoFocus />
        <button type="submit" disabled={!token.trim()}>
          Sign in
        </button>
      </form>
    </main>
  );
}

/**
 * A request path as a log line may hold it: an emailed link's `/decide/<token>` becomes
 * `/decide/[token]`, so no log holds a link that decides. Every line that writes a path goes
 * through this.
 */
export function loggedPath(path: string): string {
  return path.replace(/^(\/decide\/)[^/?#]+/, "$1[token]").slice(0, 200);
}

/** The cookies a server set, returned on every later request of the connection.
 *
 * The RFD asks clients to keep them for the connection's life (servers use them for
 * sticky routing). Node's `fetch` keeps none, so the client keeps this jar: one per
 * connection, one endpoint, attributes other than the name and value not interpreted. */
export class CookieJar {
  readonly cookies = new Map<string, string>();

  /** Keeps the cookies of `Set-Cookie` header values. */
  store(setCookies: Iterable<string>): void {
    for (const value of setCookies) {
      const pair = value.split(";", 1)[0] ?? "";
      const equals = pair.indexOf("=");
      if (equals <= 0) continue;
      const name = pair.slice(0, equals).trim();
      if (name !== "") this.cookies.set(name, pair.slice(equals + 1).trim());
    }
  }

  /** The `Cookie` header value, or `undefined` when the jar is empty. */
  header(): string | undefined {
    if (this.cookies.size === 0) return undefined;
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
  }
}

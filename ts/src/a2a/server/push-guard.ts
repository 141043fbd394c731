/**
 * The SSRF guard of push notifications: which addresses the server may POST to. A push
 * URL comes from a client, so without a guard the agent could be made to call its own
 * admin port, a cloud metadata service (`169.254.169.254`) or anything else on its
 * network. Every address that is not globally routable is refused unless allowed
 * (`allowLoopback`, or a CIDR in `allow`).
 *
 * It runs twice, as in the Rust SDK: `checkUrl` when a config is set (the scheme, and the
 * address of an IP-literal host), and `guardedLookup`, the resolver of the delivery's
 * connection, on every address a host name resolves to when it is dialled (so the name
 * cannot be re-pointed at a private address between a check and the connection).
 */

import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { isIP } from "node:net";

/** Why an address is not public. */
export type AddressClass = "unspecified" | "broadcast" | "loopback" | "private" | "shared" | "link-local" | "multicast" | "reserved";

/** The guard's settings. */
export interface GuardOptions {
  /** Let loopback targets (`127.0.0.0/8`, `::1`) through: tests, local receivers. */
  readonly allowLoopback?: boolean;
  /** Networks let through although they are not public (`10.1.0.0/16`, `fd00::/8`). */
  readonly allow?: readonly string[];
}

/** A refused push target (permanent: the same URL is refused again). */
export class GuardRefusal extends Error {
  constructor(message: string) {
    super(message);
    this.name = "GuardRefusal";
  }
}

interface Net {
  readonly v6: boolean;
  readonly bits: bigint;
  readonly prefix: number;
}

/** An address as its bits: 32 for IPv4, 128 for IPv6 (IPv4-mapped ones as IPv4). */
function addressBits(text: string): { v6: boolean; bits: bigint } | null {
  const kind = isIP(text);
  if (kind === 4) return { v6: false, bits: text.split(".").reduce((acc, p) => (acc << 8n) | BigInt(Number(p)), 0n) };
  if (kind !== 6) return null;
  let head = text.toLowerCase();
  let tailV4: bigint | null = null;
  const dotted = /:(\d+\.\d+\.\d+\.\d+)$/.exec(head);
  if (dotted !== null) {
    tailV4 = (addressBits(dotted[1] as string) as { bits: bigint }).bits;
    head = `${head.slice(0, dotted.index)}:0:0`;
  }
  const [left, right] = head.includes("::") ? (head.split("::") as [string, string]) : [head, null];
  const groupsOf = (s: string): string[] => (s === "" ? [] : s.split(":"));
  const l = groupsOf(left);
  const r = right === null ? [] : groupsOf(right);
  const groups = right === null ? l : [...l, ...Array<string>(8 - l.length - r.length).fill("0"), ...r];
  let bits = groups.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g, 16)), 0n);
  if (tailV4 !== null) bits = (bits & ~0xffffffffn) | tailV4;
  if (bits >> 32n === 0xffffn) return { v6: false, bits: bits & 0xffffffffn };
  return { v6: true, bits };
}

function net(cidr: string): Net {
  const slash = cidr.indexOf("/");
  const addr = addressBits(slash < 0 ? cidr : cidr.slice(0, slash));
  if (addr === null) throw new GuardRefusal(`invalid CIDR ${JSON.stringify(cidr)}: not an IP address`);
  const width = addr.v6 ? 128 : 32;
  let prefix = slash < 0 ? width : Number(cidr.slice(slash + 1));
  // An IPv4-mapped IPv6 network is its IPv4 form.
  if (!addr.v6 && isIP(cidr.slice(0, slash < 0 ? undefined : slash)) === 6 && slash >= 0) prefix -= 96;
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > width) throw new GuardRefusal(`invalid CIDR ${JSON.stringify(cidr)}: the prefix is not 0 to ${width}`);
  const mask = ((1n << BigInt(width)) - 1n) ^ ((1n << BigInt(width - prefix)) - 1n);
  return { v6: addr.v6, bits: addr.bits & mask, prefix };
}

function within(addr: { v6: boolean; bits: bigint }, n: Net): boolean {
  if (addr.v6 !== n.v6) return false;
  const width = n.v6 ? 128 : 32;
  const mask = ((1n << BigInt(width)) - 1n) ^ ((1n << BigInt(width - n.prefix)) - 1n);
  return (addr.bits & mask) === n.bits;
}

const V4: ReadonlyArray<[string, AddressClass]> = [
  ["0.0.0.0/32", "unspecified"],
  ["255.255.255.255/32", "broadcast"],
  ["127.0.0.0/8", "loopback"],
  ["10.0.0.0/8", "private"],
  ["172.16.0.0/12", "private"],
  ["192.168.0.0/16", "private"],
  ["100.64.0.0/10", "shared"],
  ["169.254.0.0/16", "link-local"],
  ["224.0.0.0/4", "multicast"],
  ["0.0.0.0/8", "reserved"],
  ["240.0.0.0/4", "reserved"],
  ["192.0.0.0/24", "reserved"],
  ["192.0.2.0/24", "reserved"],
  ["192.88.99.0/24", "reserved"],
  ["198.18.0.0/15", "reserved"],
  ["198.51.100.0/24", "reserved"],
  ["203.0.113.0/24", "reserved"],
];

const V6: ReadonlyArray<[string, AddressClass]> = [
  ["::/128", "unspecified"],
  ["::1/128", "loopback"],
  ["ff00::/8", "multicast"],
  ["fe80::/10", "link-local"],
  ["fc00::/7", "private"],
  ["fec0::/10", "private"],
  ["::/96", "reserved"],
  ["64:ff9b:1::/48", "reserved"],
  ["100::/64", "reserved"],
  ["2001:db8::/32", "reserved"],
  ["2001::/23", "reserved"],
];

const TABLE: ReadonlyArray<[Net, AddressClass]> = [...V4, ...V6].map(([cidr, cls]) => [net(cidr), cls]);
const NAT64 = net("64:ff9b::/96");
const SIX_TO_FOUR = net("2002::/16");

/** Why `address` is not public, or `null` when it is (or is not an IP address). */
export function classify(address: string): AddressClass | null {
  const addr = addressBits(address);
  if (addr === null) return null;
  return classifyBits(addr);
}

function classifyBits(addr: { v6: boolean; bits: bigint }): AddressClass | null {
  // The IPv4 destination inside NAT64 and 6to4 addresses decides.
  if (within(addr, NAT64)) return classifyBits({ v6: false, bits: addr.bits & 0xffffffffn });
  if (within(addr, SIX_TO_FOUR)) return classifyBits({ v6: false, bits: (addr.bits >> 80n) & 0xffffffffn });
  for (const [n, cls] of TABLE) if (within(addr, n)) return cls;
  return null;
}

/** Which push targets the server may call. */
export class SsrfGuard {
  private readonly allowed: readonly Net[];

  /** @throws GuardRefusal on an `allow` entry that is not a CIDR */
  constructor(private readonly options: GuardOptions = {}) {
    this.allowed = (options.allow ?? []).map(net);
  }

  /** Why the guard refuses `address`, or `null` when it may be dialled. */
  refuses(address: string): string | null {
    const addr = addressBits(address);
    if (addr === null) return `${JSON.stringify(address)} is not an IP address`;
    const cls = classifyBits(addr);
    if (cls === null) return null;
    if (cls === "loopback" && this.options.allowLoopback === true) return null;
    if (this.allowed.some((n) => within(addr, n))) return null;
    return `the address ${address} is ${cls} (not public); the SSRF guard refuses it`;
  }

  /** Checks a push URL: absolute, http or https, and an IP-literal host the guard lets
   * through. @throws GuardRefusal */
  checkUrl(url: string): URL {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new GuardRefusal(`push URL ${JSON.stringify(url)} is not a valid absolute URL`);
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new GuardRefusal(`push URL scheme ${JSON.stringify(parsed.protocol.slice(0, -1))} is not allowed (only http and https)`);
    const host = parsed.hostname.replace(/^\[|\]$/g, "");
    if (isIP(host) !== 0) {
      const why = this.refuses(host);
      if (why !== null) throw new GuardRefusal(`push URL ${JSON.stringify(url)}: ${why}`);
    } else if (host === "localhost" || host.endsWith(".localhost")) {
      if (this.options.allowLoopback !== true) throw new GuardRefusal(`push URL ${JSON.stringify(url)}: localhost is loopback; the SSRF guard refuses it`);
    }
    return parsed;
  }

  /** A `lookup` for `http.request` that resolves a name and keeps only the addresses the
   * guard lets through (none left: the connection fails with the refusal). */
  readonly guardedLookup = (hostname: string, options: object, callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void): void => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err !== null) return callback(err, "");
      const list = addresses as LookupAddress[];
      const kept = list.filter((a) => this.refuses(a.address) === null);
      if (kept.length === 0) {
        const why = list.length === 0 ? `${hostname} resolves to no address` : (this.refuses((list[0] as LookupAddress).address) as string);
        const refusal: NodeJS.ErrnoException = new GuardRefusal(`push target ${hostname}: ${why}`);
        refusal.code = "ESSRF";
        return callback(refusal, "");
      }
      if ((options as { all?: boolean }).all === true) return callback(null, kept);
      const first = kept[0] as LookupAddress;
      callback(null, first.address, first.family);
    });
  };
}

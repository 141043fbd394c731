/**
 * Random (version 4) UUIDs as flat strings. `crypto.randomUUID()` builds its text by
 * concatenation: a tree of about fourteen string pieces that stays as it is until something
 * flattens it, and a task keeps two such ids (its own and its context's) for as long as it
 * is stored. Here the text is written into bytes and read out as one string. The entropy
 * comes from the same source, fetched 256 ids at a time.
 */

import { randomFillSync } from "node:crypto";

const POOL_IDS = 256;
const pool = Buffer.allocUnsafe(16 * POOL_IDS);
let at = pool.length;
const text = Buffer.alloc(36, "-");
/** The two ASCII hex digits of each byte value. */
const HEX = new Uint8Array(512);
for (let i = 0; i < 256; i++) {
  const digits = i.toString(16).padStart(2, "0");
  HEX[2 * i] = digits.charCodeAt(0);
  HEX[2 * i + 1] = digits.charCodeAt(1);
}
/** Where each byte's two digits go in `8-4-4-4-12`. */
const PLACE = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];

/** A new random UUID (RFC 9562 version 4), lower case, as one flat string. */
export function newUuid(): string {
  if (at === pool.length) {
    randomFillSync(pool);
    at = 0;
  }
  for (let i = 0; i < 16; i++) {
    let b = pool[at + i] as number;
    if (i === 6) b = (b & 0x0f) | 0x40;
    else if (i === 8) b = (b & 0x3f) | 0x80;
    const p = PLACE[i] as number;
    text[p] = HEX[2 * b] as number;
    text[p + 1] = HEX[2 * b + 1] as number;
  }
  at += 16;
  return text.toString("latin1", 0, 36);
}

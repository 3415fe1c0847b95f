// Reads lines "COURIER NUMBER" (COURIER one of usps, ups, s10) and prints each number with the
// courier ts-tracking-number recognises it as among that one (its check digit verified), or
// "none".
import * as tracking from "ts-tracking-number";
import { createInterface } from "node:readline";

for await (const line of createInterface({ input: process.stdin })) {
  const [courier, number] = line.trim().split(/\s+/);
  if (!number) continue;
  const t = tracking[courier] && tracking.getTracking(number, [tracking[courier]]);
  console.log(`${number}\t${t ? t.courier.code : "none"}`);
}

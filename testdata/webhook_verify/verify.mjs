// Verifies real waybill webhook deliveries with the official Standard Webhooks library.
//
//   node verify.mjs deliveries.json
//
// The file holds {"secret": "<subscription secret as shown>", "deliveries": [{"headers": {…},
// "body": "<exact body>"}]}. Every delivery must verify with "whsec_" + secret, and must fail
// once its body is altered. Prints "verified N deliveries" and exits 0, or exits 1.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { Webhook } = require("standardwebhooks");

const input = JSON.parse(readFileSync(process.argv[2], "utf8"));
const wh = new Webhook("whsec_" + input.secret);
let n = 0;
for (const d of input.deliveries) {
  const headers = {
    "webhook-id": d.headers["webhook-id"],
    "webhook-timestamp": d.headers["webhook-timestamp"],
    "webhook-signature": d.headers["webhook-signature"],
  };
  const payload = wh.verify(d.body, headers); // throws on a bad signature
  if (payload.id !== headers["webhook-id"]) {
    console.error(`delivery ${n}: payload id ${payload.id} != webhook-id ${headers["webhook-id"]}`);
    process.exit(1);
  }
  let tamperedVerified = true;
  try {
    wh.verify(d.body.replace(/}$/, ' }'), headers);
  } catch {
    tamperedVerified = false;
  }
  if (tamperedVerified) {
    console.error(`delivery ${n}: an altered body verified`);
    process.exit(1);
  }
  n++;
}
console.log(`verified ${n} deliveries`);

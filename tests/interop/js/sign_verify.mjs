// Agent Card signature interop with the official A2A JS SDK (@a2a-js/sdk).
//
//   node sign_verify.mjs verify CARD_URL JWKS_URL
//       fetches a gateway-signed card and its JWKS and verifies the card
//       with the SDK's verifyAgentCardSignature; prints {"ok":true,...}.
//   node sign_verify.mjs sign CARD_FILE
//       signs the card with a fresh ES256 key through the SDK's
//       generateAgentCardSignature; prints {"card":…,"jwks":{"keys":[…]}}.
//
// Exits non-zero on failure.
import { readFileSync } from 'node:fs';
import * as jose from 'jose';
import { generateAgentCardSignature, verifyAgentCardSignature } from '@a2a-js/sdk';

async function verify(cardURL, jwksURL) {
  const card = await (await fetch(cardURL)).json();
  const jwks = await (await fetch(jwksURL)).json();
  const used = [];
  const verifier = verifyAgentCardSignature(async (kid) => {
    const jwk = jwks.keys.find((k) => k.kid === kid);
    if (!jwk) throw new Error(`no key ${kid}`);
    used.push(kid);
    return jose.importJWK(jwk, jwk.alg);
  });
  await verifier(card);
  // A tampered card must fail.
  let tamperedRejected = false;
  try {
    await verifier({ ...card, description: card.description + ' (tampered)' });
  } catch {
    tamperedRejected = true;
  }
  return { ok: tamperedRejected, kids: used, signatures: card.signatures.length, tamperedRejected };
}

async function sign(cardFile) {
  const card = JSON.parse(readFileSync(cardFile, 'utf8'));
  const { privateKey, publicKey } = await jose.generateKeyPair('ES256', { extractable: true });
  const signer = generateAgentCardSignature(privateKey, { alg: 'ES256', kid: 'js-es256', typ: 'JOSE' });
  const signed = await signer(card);
  const jwk = await jose.exportJWK(publicKey);
  return { card: signed, jwks: { keys: [{ ...jwk, kid: 'js-es256', alg: 'ES256', use: 'sig' }] } };
}

// The SDK logs each failed signature entry with console.debug (stdout);
// keep stdout to the one JSON summary.
console.debug = () => {};

const [mode, a, b] = process.argv.slice(2);
try {
  let out;
  if (mode === 'verify') out = await verify(a, b);
  else if (mode === 'sign') out = await sign(a);
  else throw new Error('usage: sign_verify.mjs verify CARD_URL JWKS_URL | sign CARD_FILE');
  console.log(JSON.stringify(out));
  process.exit(out.ok === false ? 1 : 0);
} catch (e) {
  console.log(JSON.stringify({ ok: false, error: String(e && e.message ? e.message : e) }));
  process.exit(1);
}

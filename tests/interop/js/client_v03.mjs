// A2A 0.3 interop client for the caddy-a2a gateway with legacy_v03 (RPC-2),
// driving it through the official A2A JS SDK 0.3 (npm alias a2a-sdk-v03 =
// @a2a-js/sdk@0.3.14, pinned in package.json) over JSON-RPC.
//
// Usage: node client_v03.mjs <baseURL> <slowBaseURL> <token> <pushURL>
//
//   baseURL      a gateway with a fast echo backend
//   slowBaseURL  a gateway whose echo turns run for a few seconds (cancel,
//                resubscribe)
//   token        the bearer token of both gateways
//   pushURL      a webhook URL the gateways may deliver to
//
// Prints one JSON summary on stdout: {"ok":bool,"sdk":"@a2a-js/sdk@<v>",
// "steps":{...},"failures":[...]}, and exits non-zero if a check failed.

import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from 'a2a-sdk-v03/client';

const [baseURL, slowURL, token, pushURL] = process.argv.slice(2);
if (!baseURL || !slowURL || !token || !pushURL) {
  console.error('usage: node client_v03.mjs <baseURL> <slowBaseURL> <token> <pushURL>');
  process.exit(2);
}

const sdkVersion = JSON.parse(
  readFileSync(new URL('./node_modules/a2a-sdk-v03/package.json', import.meta.url), 'utf8'),
).version;

const failures = [];
const summary = { ok: false, sdk: `@a2a-js/sdk@${sdkVersion}`, steps: {} };

class CheckError extends Error {}
function check(cond, what) {
  if (!cond) throw new CheckError(what);
}

// Every request carries the bearer token; none carries A2A-Version (a 0.3
// client sends none: the gateway tells 0.3 by the method name).
const authFetch = (input, init = {}) => {
  const headers = new Headers(init.headers || {});
  headers.set('Authorization', `Bearer ${token}`);
  return fetch(input, { ...init, headers });
};

function factory() {
  return new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl: authFetch })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl: authFetch }),
    }),
  );
}

function textOf(message) {
  if (!message || !Array.isArray(message.parts)) return '';
  return message.parts.map((p) => (p.kind === 'text' ? p.text : '')).join('');
}

function userMessage(text, extra = {}) {
  return { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text }], ...extra };
}

function describe(ev) {
  if (!ev || typeof ev !== 'object') return 'empty';
  if (ev.kind === 'status-update') return `status-update(${ev.status.state},final=${ev.final})`;
  if (ev.kind === 'artifact-update') return `artifact-update(${ev.artifact.artifactId})`;
  return `${ev.kind}(${ev.id || ev.messageId})`;
}

async function step(name, fn) {
  const rec = { ok: false };
  summary.steps[name] = rec;
  try {
    Object.assign(rec, await fn());
    rec.ok = true;
  } catch (e) {
    rec.error = `${e && e.constructor ? e.constructor.name : 'Error'}: ${e && e.message}`;
    failures.push(`${name}: ${rec.error}`);
  }
}

async function collect(gen) {
  const events = [];
  for await (const ev of gen) events.push(ev);
  return events;
}

async function waitState(client, id, want) {
  for (let i = 0; i < 100; i++) {
    const t = await client.getTask({ id });
    if (t.status.state === want) return t;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new CheckError(`task ${id} never reached ${want}`);
}

const fast = await factory().createFromUrl(baseURL);
const slow = await factory().createFromUrl(slowURL);
let first;

await step('agentCard', async () => {
  const card = await fast.getAgentCard();
  check(card.url && card.url.startsWith(baseURL), `card.url ${card.url}`);
  return { name: card.name, protocolVersion: card.protocolVersion, preferredTransport: card.preferredTransport, streaming: !!card.capabilities.streaming };
});

await step('sendMessage', async () => {
  const res = await fast.sendMessage({ message: userMessage('hello from a2a-js 0.3') });
  check(res.kind === 'task', `result kind ${res.kind}`);
  first = res;
  return { kind: res.kind, state: res.status.state, text: textOf(res.status.message), taskId: res.id, contextId: res.contextId };
});

await step('followUp', async () => {
  const res = await fast.sendMessage({ message: userMessage('second turn', { contextId: first.contextId }) });
  return { state: res.status.state, taskId: res.id, contextId: res.contextId };
});

await step('sendMessageStream', async () => {
  const events = await collect(fast.sendMessageStream({ message: userMessage('stream please') }));
  check(events.length > 0, 'no events');
  return { firstEvent: events[0].kind, lastEvent: describe(events[events.length - 1]), events: events.length };
});

await step('getTask', async () => {
  const t = await fast.getTask({ id: first.id, historyLength: 10 });
  let unknownIdError = '';
  try {
    await fast.getTask({ id: 'no-such-task' });
  } catch (e) {
    unknownIdError = e.constructor.name;
  }
  return { kind: t.kind, state: t.status.state, history: (t.history || []).length, firstRole: (t.history || [{}])[0].role, unknownIdError };
});

await step('pushConfig', async () => {
  const set = await fast.setTaskPushNotificationConfig({
    taskId: first.id,
    pushNotificationConfig: { id: 'cfg-1', url: pushURL, token: 'push-token-03', authentication: { schemes: ['Bearer'], credentials: 'cb-secret' } },
  });
  const got = await fast.getTaskPushNotificationConfig({ id: first.id, pushNotificationConfigId: 'cfg-1' });
  const list = await fast.listTaskPushNotificationConfig({ id: first.id });
  return {
    setTaskId: set.taskId,
    setURL: set.pushNotificationConfig.url,
    gotID: got.pushNotificationConfig.id,
    gotScheme: (got.pushNotificationConfig.authentication || { schemes: [] }).schemes[0] || '',
    listed: list.length,
  };
});

await step('cancelTask', async () => {
  const res = await slow.sendMessage({ message: userMessage('long job'), configuration: { blocking: false } });
  check(res.kind === 'task', `result kind ${res.kind}`);
  await waitState(slow, res.id, 'working');
  const t = await slow.cancelTask({ id: res.id });
  return { state: t.status.state, taskId: res.id };
});

await step('resubscribeTask', async () => {
  const res = await slow.sendMessage({ message: userMessage('long job to watch'), configuration: { blocking: false } });
  await waitState(slow, res.id, 'working');
  const events = await collect(slow.resubscribeTask({ id: res.id }));
  check(events.length > 0, 'no events');
  return { firstEvent: events[0].kind, lastEvent: describe(events[events.length - 1]) };
});

summary.failures = failures;
summary.ok = failures.length === 0;
console.log(JSON.stringify(summary));
process.exit(summary.ok ? 0 : 1);

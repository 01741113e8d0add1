// A plain A2A 0.3 agent built from the official JS SDK 0.3 (npm alias
// a2a-sdk-v03 = @a2a-js/sdk@0.3.14) with its Express app: unauthenticated,
// in-memory, unsigned card, no push. The `backend a2a` tests
// (tests/backend_a2a_test.go) put the gateway in front of it (TURN-9).
//
// Usage: node server_v03.mjs <port>
//
// Serves on http://127.0.0.1:<port> (card at /.well-known/agent-card.json,
// JSON-RPC at /) and prints {"ready":true,"url":"http://127.0.0.1:<port>"}.
// The agent answers "JS03 echo: <prompt>" in word chunks (working status
// updates), then an artifact "answer", and asks for more input
// (input-required). A prompt containing "slow" runs ~20 s and honours
// cancel; a prompt containing "done" completes the task.

import express from 'express';
import { randomUUID } from 'node:crypto';
import { DefaultRequestHandler, InMemoryTaskStore } from 'a2a-sdk-v03/server';
import { A2AExpressApp } from 'a2a-sdk-v03/server/express';

const port = Number(process.argv[2]);
if (!Number.isInteger(port) || port <= 0) {
  console.error('usage: node server_v03.mjs <port>');
  process.exit(2);
}
const base = `http://127.0.0.1:${port}`;

const card = {
  protocolVersion: '0.3.0',
  name: 'js-v03',
  description: 'A plain A2A 0.3 agent (JS SDK 0.3.14)',
  url: `${base}/`,
  preferredTransport: 'JSONRPC',
  additionalInterfaces: [{ url: `${base}/`, transport: 'JSONRPC' }],
  version: '0.3.0',
  capabilities: { streaming: true, pushNotifications: false, stateTransitionHistory: false },
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [{ id: 'echo03', name: 'Echo 0.3', description: 'Echoes the prompt', tags: ['echo', 'v03'] }],
};

const agentMessage = (contextId, taskId, text) => ({
  kind: 'message', messageId: randomUUID(), role: 'agent', contextId, taskId, parts: [{ kind: 'text', text }],
});
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const canceled = new Set();

const executor = {
  async execute(ctx, bus) {
    const { taskId, contextId, userMessage } = ctx;
    const prompt = (userMessage.parts || []).map((p) => (p.kind === 'text' ? p.text : '')).join('');
    const update = (state, message, final) =>
      bus.publish({ kind: 'status-update', taskId, contextId, final, status: { state, message, timestamp: new Date().toISOString() } });
    if (!ctx.task) {
      bus.publish({ kind: 'task', id: taskId, contextId, status: { state: 'submitted', timestamp: new Date().toISOString() }, history: [userMessage] });
    }
    update('working', undefined, false);
    const answer = `JS03 echo: ${prompt}`;
    const words = answer.split(/(?<= )/);
    const steps = prompt.includes('slow') ? 200 : words.length;
    for (let i = 0; i < steps; i++) {
      if (canceled.has(taskId)) {
        update('canceled', agentMessage(contextId, taskId, 'Canceled.'), true);
        bus.finished();
        return;
      }
      if (i < words.length) update('working', agentMessage(contextId, taskId, words[i]), false);
      await sleep(prompt.includes('slow') ? 100 : 5);
    }
    bus.publish({ kind: 'artifact-update', taskId, contextId, lastChunk: true, artifact: { artifactId: 'answer', name: 'answer', parts: [{ kind: 'text', text: answer }] } });
    update(prompt.includes('done') ? 'completed' : 'input-required', agentMessage(contextId, taskId, answer), true);
    bus.finished();
  },
  async cancelTask(taskId, bus) {
    canceled.add(taskId);
  },
};

const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
const app = new A2AExpressApp(handler).setupRoutes(express());
const server = app.listen(port, '127.0.0.1', () => {
  console.log(JSON.stringify({ ready: true, url: base }));
});
server.on('error', (err) => {
  console.error(`server_v03.mjs: ${err.message}`);
  process.exit(1);
});
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => server.close(() => process.exit(0)));

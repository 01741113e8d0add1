// A reference A2A 1.0 server built from the official JS SDK (@a2a-js/sdk,
// pinned in package.json) with its Express integration. The caddy-a2a CLI
// interop test (tests/client_interop_test.go) starts it and drives it with
// `caddy a2a call|task …`.
//
// Usage: node server.mjs <port>
//
// Serves on http://127.0.0.1:<port>: the card at /.well-known/agent-card.json
// (JSONRPC at /a2a/jsonrpc first, HTTP+JSON at /a2a/rest second), and prints
// one line {"ready":true,"url":"http://127.0.0.1:<port>"} once listening.
//
// The agent answers "JS echo: <prompt>" streamed in word chunks (status
// updates with text messages), then an artifact "answer" with the whole
// text, and completes. A prompt containing "slow" runs ~20 s in 100 ms
// steps and honours cancel; a prompt containing "fail" ends FAILED.

import express from 'express';
import { randomUUID } from 'node:crypto';
import { TaskState, Role } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, restHandler, UserBuilder } from '@a2a-js/sdk/server/express';

const port = Number(process.argv[2]);
if (!Number.isInteger(port) || port <= 0) {
  console.error('usage: node server.mjs <port>');
  process.exit(2);
}
const base = `http://127.0.0.1:${port}`;

const card = {
  name: 'js-reference',
  description: 'A2A JS SDK reference server for caddy-a2a interop',
  version: '1.0.0',
  supportedInterfaces: [
    { url: `${base}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' },
    { url: `${base}/a2a/rest`, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0', tenant: '' },
  ],
  provider: undefined,
  capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
  securitySchemes: {},
  securityRequirements: [],
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [{ id: 'echo', name: 'Echo', description: 'Echoes the prompt', tags: ['echo'], examples: [], inputModes: [], outputModes: [], securityRequirements: [] }],
  signatures: [],
};

const textPart = (value) => ({ content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: 'text/plain' });
const agentMessage = (contextId, taskId, text) => ({
  messageId: randomUUID(), contextId, taskId, role: Role.ROLE_AGENT, parts: [textPart(text)],
  metadata: undefined, extensions: [], referenceTaskIds: [],
});
const status = (state, message) => ({ state, message, timestamp: new Date().toISOString() });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const canceled = new Set();

const executor = {
  async execute(ctx, bus) {
    const { taskId, contextId } = ctx;
    const user = ctx.userMessage;
    const prompt = (user.parts || [])
      .map((p) => (p.content && p.content.$case === 'text' ? p.content.value : ''))
      .join('');
    const update = (state, message) =>
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(state, message), metadata: undefined }));

    bus.publish(AgentEvent.task({
      id: taskId, contextId, status: status(TaskState.TASK_STATE_SUBMITTED, undefined),
      artifacts: [], history: ctx.task ? [...ctx.task.history, user] : [user], metadata: undefined,
    }));
    update(TaskState.TASK_STATE_WORKING, undefined);

    const answer = `JS echo: ${prompt}`;
    const words = answer.split(/(?<= )/);
    const steps = prompt.includes('slow') ? 200 : words.length;
    for (let i = 0; i < steps; i++) {
      if (canceled.has(taskId)) {
        update(TaskState.TASK_STATE_CANCELED, agentMessage(contextId, taskId, 'Canceled.'));
        bus.finished();
        return;
      }
      if (i < words.length) update(TaskState.TASK_STATE_WORKING, agentMessage(contextId, taskId, words[i]));
      await sleep(prompt.includes('slow') ? 100 : 10);
    }
    if (prompt.includes('fail')) {
      update(TaskState.TASK_STATE_FAILED, agentMessage(contextId, taskId, 'The agent failed on purpose.'));
      bus.finished();
      return;
    }
    bus.publish(AgentEvent.artifactUpdate({
      taskId, contextId, append: false, lastChunk: true, metadata: undefined,
      artifact: { artifactId: 'answer', name: 'answer', description: '', parts: [textPart(answer)], metadata: undefined, extensions: [] },
    }));
    update(TaskState.TASK_STATE_COMPLETED, agentMessage(contextId, taskId, answer));
    bus.finished();
  },
  async cancelTask(taskId) {
    canceled.add(taskId);
  },
};

const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
const app = express();
app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler }));
app.use('/a2a/jsonrpc', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
app.use('/a2a/rest', restHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));

const server = app.listen(port, '127.0.0.1', () => {
  console.log(JSON.stringify({ ready: true, url: base }));
});
server.on('error', (err) => {
  console.error(`server.mjs: ${err.message}`);
  process.exit(1);
});
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => server.close(() => process.exit(0)));

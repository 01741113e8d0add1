// The JS SDK baseline of the load harness (tests/bench): an A2A 1.0 echo
// agent on the official JS SDK (@a2a-js/sdk, in-memory task store) that
// answers like the gateway's echo backend — the task, WORKING, three text
// chunks, then INPUT_REQUIRED with the whole answer — with no delays.
//
// Usage: node bench_server.mjs <port>
// Serves JSON-RPC at http://127.0.0.1:<port>/a2a/jsonrpc and prints
// {"ready":true,"url":"http://127.0.0.1:<port>"} once listening.

import express from 'express';
import { randomUUID } from 'node:crypto';
import { TaskState, Role } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';

const port = Number(process.argv[2]);
if (!Number.isInteger(port) || port <= 0) {
  console.error('usage: node bench_server.mjs <port>');
  process.exit(2);
}
const base = `http://127.0.0.1:${port}`;
const card = {
  name: 'js-bench', description: 'JS SDK echo baseline', version: '1.0.0',
  supportedInterfaces: [{ url: `${base}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' }],
  provider: undefined,
  capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
  securitySchemes: {}, securityRequirements: [],
  defaultInputModes: ['text/plain'], defaultOutputModes: ['text/plain'],
  skills: [{ id: 'echo', name: 'Echo', description: 'Echoes the prompt', tags: ['echo'], examples: [], inputModes: [], outputModes: [], securityRequirements: [] }],
  signatures: [],
};
const textPart = (value) => ({ content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: 'text/plain' });
const message = (contextId, taskId, text) => ({
  messageId: randomUUID(), contextId, taskId, role: Role.ROLE_AGENT, parts: [textPart(text)],
  metadata: undefined, extensions: [], referenceTaskIds: [],
});
const status = (state, msg) => ({ state, message: msg, timestamp: new Date().toISOString() });

const executor = {
  async execute(ctx, bus) {
    const { taskId, contextId } = ctx;
    const user = ctx.userMessage;
    const prompt = (user.parts || []).map((p) => (p.content && p.content.$case === 'text' ? p.content.value : '')).join('');
    const update = (state, msg) => bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(state, msg), metadata: undefined }));
    bus.publish(AgentEvent.task({
      id: taskId, contextId, status: status(TaskState.TASK_STATE_SUBMITTED, undefined),
      artifacts: [], history: ctx.task ? [...ctx.task.history, user] : [user], metadata: undefined,
    }));
    update(TaskState.TASK_STATE_WORKING, undefined);
    const answer = `Echo: ${prompt}`;
    const third = Math.ceil(answer.length / 3);
    for (let i = 0; i < 3; i++) update(TaskState.TASK_STATE_WORKING, message(contextId, taskId, answer.slice(i * third, (i + 1) * third)));
    update(TaskState.TASK_STATE_INPUT_REQUIRED, message(contextId, taskId, answer));
    bus.finished();
  },
  async cancelTask() {},
};

const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
const app = express();
app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler }));
app.use('/a2a/jsonrpc', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
const server = app.listen(port, '127.0.0.1', () => console.log(JSON.stringify({ ready: true, url: base })));
server.on('error', (err) => { console.error(`bench_server.mjs: ${err.message}`); process.exit(1); });
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => server.close(() => process.exit(0)));

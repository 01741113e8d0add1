// Interop client for the caddy-a2a gateway, driving it through the official
// A2A JS SDK (@a2a-js/sdk, pinned in package.json) over JSON-RPC and HTTP+JSON.
//
// Usage: node client.mjs <baseURL> [slowBaseURL]
//
//   baseURL      a gateway with a fast echo backend
//   slowBaseURL  a gateway whose echo turns run for a few seconds (used for
//                cancel and subscribe on a running task); defaults to baseURL
//
// Prints one JSON summary on stdout: {"ok":bool,"sdk":"@a2a-js/sdk@<v>",
// "bindings":{"JSONRPC":{...},"HTTP+JSON":{...}},"failures":[...]}, and exits
// non-zero if any check failed.

import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
} from '@a2a-js/sdk/client';
import {
  CancelTaskRequest,
  GetTaskRequest,
  ListTasksRequest,
  SendMessageRequest,
  SubscribeToTaskRequest,
  TaskState,
  Role,
  taskStateToJSON,
} from '@a2a-js/sdk';

const [baseURL, slowArg] = process.argv.slice(2);
if (!baseURL) {
  console.error('usage: node client.mjs <baseURL> [slowBaseURL]');
  process.exit(2);
}
const slowURL = slowArg || baseURL;

const sdkVersion = JSON.parse(
  readFileSync(new URL('./node_modules/@a2a-js/sdk/package.json', import.meta.url), 'utf8'),
).version;

const failures = [];
const summary = { ok: false, sdk: `@a2a-js/sdk@${sdkVersion}`, baseURL, slowURL, bindings: {} };

class CheckError extends Error {}

function check(cond, what) {
  if (!cond) throw new CheckError(what);
}

const stateName = (s) => (typeof s === 'number' ? taskStateToJSON(s) : String(s));

function textOf(message) {
  if (!message || !Array.isArray(message.parts)) return '';
  return message.parts
    .map((p) => (p.content && p.content.$case === 'text' ? p.content.value : ''))
    .join('');
}

function userMessage(text, contextId, configuration) {
  return SendMessageRequest.fromJSON({
    message: {
      messageId: randomUUID(),
      role: 'ROLE_USER',
      parts: [{ text }],
      ...(contextId ? { contextId } : {}),
    },
    ...(configuration ? { configuration } : {}),
  });
}

function isTask(result) {
  return result && typeof result === 'object' && 'status' in result && 'id' in result && !('messageId' in result);
}

function describeEvent(ev) {
  const p = ev && ev.payload;
  if (!p) return 'empty';
  const v = p.value || {};
  const st = v.status ? stateName(v.status.state) : '';
  return st ? `${p.$case}(${st})` : p.$case;
}

function eventState(ev) {
  const p = ev && ev.payload;
  if (!p || !p.value || !p.value.status) return undefined;
  return p.value.status.state;
}

function eventTaskInfo(ev) {
  const p = ev.payload;
  if (p.$case === 'task') return { taskId: p.value.id, contextId: p.value.contextId };
  return { taskId: p.value.taskId, contextId: p.value.contextId };
}

const TERMINAL = new Set([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);

// Checks a Task whose echo turn has ended INPUT_REQUIRED.
function checkTurnDone(task, prompt, what) {
  const want = `Echo: ${prompt}`;
  check(isTask(task), `${what}: result is not a Task: ${JSON.stringify(task).slice(0, 300)}`);
  check(task.id && task.contextId, `${what}: task lacks id or contextId`);
  check(
    task.status.state === TaskState.TASK_STATE_INPUT_REQUIRED,
    `${what}: state ${stateName(task.status.state)}, want TASK_STATE_INPUT_REQUIRED`,
  );
  check(
    textOf(task.status.message).includes(want),
    `${what}: status message ${JSON.stringify(textOf(task.status.message))}, want it to contain ${JSON.stringify(want)}`,
  );
  if (task.history && task.history.length > 0) {
    check(
      task.history.some((m) => m.role === Role.ROLE_AGENT && textOf(m).includes(want)),
      `${what}: history lacks the agent answer ${JSON.stringify(want)}`,
    );
  }
}

// Checks a SendStreamingMessage / SubscribeToTask stream: Task first, then
// updates of that task, ending in TASK_STATE_INPUT_REQUIRED with the echo.
function checkStream(events, prompt, what) {
  const kinds = events.map(describeEvent);
  check(events.length >= 2, `${what}: ${events.length} events (${kinds.join(' ')}), want a Task and updates`);
  const first = events[0].payload;
  check(first && first.$case === 'task', `${what}: first event is ${kinds[0]}, want task (${kinds.join(' ')})`);
  const task = first.value;
  check(!TERMINAL.has(task.status.state), `${what}: first Task is already ${stateName(task.status.state)}`);
  let sawWorking = false;
  for (const ev of events.slice(1)) {
    const info = eventTaskInfo(ev);
    check(
      info.taskId === task.id && info.contextId === task.contextId,
      `${what}: event ${describeEvent(ev)} is for ${info.taskId}/${info.contextId}, want ${task.id}/${task.contextId}`,
    );
    check(
      ['statusUpdate', 'artifactUpdate', 'task'].includes(ev.payload.$case),
      `${what}: unexpected event ${describeEvent(ev)}`,
    );
    if (eventState(ev) === TaskState.TASK_STATE_WORKING) sawWorking = true;
  }
  check(sawWorking, `${what}: no TASK_STATE_WORKING update (${kinds.join(' ')})`);
  const last = events[events.length - 1];
  check(
    eventState(last) === TaskState.TASK_STATE_INPUT_REQUIRED,
    `${what}: last event is ${describeEvent(last)}, want TASK_STATE_INPUT_REQUIRED (${kinds.join(' ')})`,
  );
  const finalIdx = events.findIndex((ev) => eventState(ev) === TaskState.TASK_STATE_INPUT_REQUIRED || TERMINAL.has(eventState(ev)));
  for (const ev of events.slice(finalIdx + 1)) {
    check(
      eventState(ev) === eventState(events[finalIdx]),
      `${what}: ${describeEvent(ev)} follows the final state (${kinds.join(' ')})`,
    );
  }
  const want = `Echo: ${prompt}`;
  const msg = last.payload.value.status.message;
  check(textOf(msg).includes(want), `${what}: final message ${JSON.stringify(textOf(msg))}, want ${JSON.stringify(want)}`);
  check(msg.role === Role.ROLE_AGENT, `${what}: final message role ${msg.role}, want ROLE_AGENT`);
  return { taskId: task.id, contextId: task.contextId, firstEvent: kinds[0], lastEvent: kinds[kinds.length - 1], events: kinds.length };
}

async function collect(iterable, onEvent) {
  const events = [];
  for await (const ev of iterable) {
    events.push(ev);
    if (onEvent && (await onEvent(ev, events))) {
      // keep reading; onEvent may trigger side effects
    }
  }
  return events;
}

async function makeClient(url, binding) {
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { preferredTransports: [binding] }),
  );
  const client = await factory.createFromUrl(url);
  const used = client.transport && client.transport.protocolName;
  check(used === binding, `client for ${binding} picked transport ${used}`);
  return client;
}

async function runBinding(binding) {
  const out = { steps: {} };
  summary.bindings[binding] = out;
  const step = async (name, fn) => {
    try {
      const detail = await fn();
      out.steps[name] = { ok: true, ...(detail || {}) };
    } catch (e) {
      const msg = e instanceof CheckError ? e.message : `${e && e.name}: ${e && e.message}${e && e.cause ? ` (cause: ${e.cause.message || e.cause})` : ''}`;
      out.steps[name] = { ok: false, error: msg };
      failures.push(`${binding} ${name}: ${msg}`);
    }
  };

  let client;
  let slowClient;
  await step('agentCard', async () => {
    const card = await new DefaultAgentCardResolver().resolve(baseURL);
    check(card.name === 'test-agent', `card name ${card.name}`);
    check(card.capabilities && card.capabilities.streaming === true, 'card capabilities.streaming is not true');
    check(
      Array.isArray(card.skills) && card.skills.length === 1 && card.skills[0].id === 'echo',
      `card skills ${JSON.stringify(card.skills)}`,
    );
    const iface = (card.supportedInterfaces || []).find((i) => i.protocolBinding === binding);
    check(iface, `card has no ${binding} interface`);
    check(iface.protocolVersion === '1.0', `${binding} interface protocolVersion ${iface.protocolVersion}`);
    client = await makeClient(baseURL, binding);
    slowClient = await makeClient(slowURL, binding);
    return { name: card.name, interfaceURL: iface.url, protocolVersion: client.protocolVersion };
  });
  if (!client) return;

  const prompt1 = `hello from a2a-js over ${binding}`;
  let first;
  await step('sendMessage', async () => {
    const res = await client.sendMessage(userMessage(prompt1));
    checkTurnDone(res, prompt1, 'sendMessage');
    check(
      (res.history || []).some((m) => m.role === Role.ROLE_USER && textOf(m).includes(prompt1)),
      'sendMessage: history lacks the user message',
    );
    first = res;
    return { taskId: res.id, contextId: res.contextId, state: stateName(res.status.state), text: textOf(res.status.message) };
  });

  await step('sendMessageStream', async () => {
    const prompt = `streaming via a2a-js ${binding}`;
    const events = await collect(client.sendMessageStream(userMessage(prompt)));
    return checkStream(events, prompt, 'sendMessageStream');
  });

  let followUp;
  await step('followUp', async () => {
    check(first, 'no first task');
    const prompt = 'second turn from a2a-js';
    const res = await client.sendMessage(userMessage(prompt, first.contextId));
    checkTurnDone(res, prompt, 'followUp');
    check(res.contextId === first.contextId, `followUp contextId ${res.contextId}, want ${first.contextId}`);
    check(res.id !== first.id, `followUp reused task id ${res.id}`);
    followUp = res;
    return { taskId: res.id, contextId: res.contextId, state: stateName(res.status.state) };
  });

  await step('getTask', async () => {
    check(first, 'no first task');
    const task = await client.getTask(GetTaskRequest.fromJSON({ id: first.id }));
    check(task.id === first.id && task.contextId === first.contextId, `getTask returned ${task.id}/${task.contextId}`);
    checkTurnDone(task, prompt1, 'getTask');
    const noHistory = await client.getTask(GetTaskRequest.fromJSON({ id: first.id, historyLength: 0 }));
    check((noHistory.history || []).length === 0, `getTask historyLength=0 returned ${noHistory.history.length} messages`);
    let notFound;
    try {
      await client.getTask(GetTaskRequest.fromJSON({ id: 'no-such-task-js' }));
    } catch (e) {
      notFound = e;
    }
    check(notFound, 'getTask(unknown id) did not fail');
    check(
      notFound.name === 'TaskNotFoundError' || /TaskNotFound/.test(notFound.constructor.name),
      `getTask(unknown id) failed with ${notFound.name}/${notFound.constructor.name}: ${notFound.message}`,
    );
    return { state: stateName(task.status.state), history: (task.history || []).length, unknownIdError: notFound.name };
  });

  await step('listTasks', async () => {
    check(first && followUp, 'no tasks to list');
    const resp = await client.listTasks(ListTasksRequest.fromJSON({ contextId: first.contextId }));
    const ids = resp.tasks.map((t) => t.id);
    check(
      ids.length === 2 && ids.includes(first.id) && ids.includes(followUp.id),
      `listTasks(contextId) returned ${JSON.stringify(ids)}, want ${first.id} and ${followUp.id}`,
    );
    check(resp.tasks.every((t) => t.contextId === first.contextId), 'listTasks returned a task of another context');
    check(resp.totalSize === 2, `listTasks totalSize ${resp.totalSize}, want 2`);
    check(resp.nextPageToken === '', `listTasks nextPageToken ${JSON.stringify(resp.nextPageToken)}, want ""`);
    const page = await client.listTasks(ListTasksRequest.fromJSON({ pageSize: 1 }));
    check(page.tasks.length === 1 && page.nextPageToken !== '' && page.pageSize === 1,
      `listTasks pageSize=1: ${page.tasks.length} tasks, token ${JSON.stringify(page.nextPageToken)}, pageSize ${page.pageSize}`);
    return { tasks: ids.length, totalSize: resp.totalSize };
  });

  await step('cancelTask', async () => {
    const prompt = `please cancel this long running turn (${binding})`;
    const events = [];
    let canceled;
    let taskId;
    for await (const ev of slowClient.sendMessageStream(userMessage(prompt))) {
      events.push(ev);
      if (events.length === 1) {
        check(ev.payload.$case === 'task', `cancel: first stream event ${describeEvent(ev)}, want task`);
        taskId = ev.payload.value.id;
        continue;
      }
      // Cancel once the turn has produced text, i.e. while it is running.
      if (!canceled && ev.payload.$case === 'statusUpdate' && textOf(ev.payload.value.status.message) !== '') {
        canceled = await slowClient.cancelTask(CancelTaskRequest.fromJSON({ id: taskId }));
      }
    }
    const kinds = events.map(describeEvent);
    check(canceled, `cancel: the turn ended before it produced text (${kinds.join(' ')})`);
    check(canceled.id === taskId, `cancelTask returned task ${canceled.id}, want ${taskId}`);
    check(
      canceled.status.state === TaskState.TASK_STATE_CANCELED,
      `cancelTask returned state ${stateName(canceled.status.state)}, want TASK_STATE_CANCELED`,
    );
    const last = events[events.length - 1];
    check(
      eventState(last) === TaskState.TASK_STATE_CANCELED,
      `cancel: stream ended with ${describeEvent(last)}, want TASK_STATE_CANCELED (${kinds.join(' ')})`,
    );
    const got = await slowClient.getTask(GetTaskRequest.fromJSON({ id: taskId }));
    check(got.status.state === TaskState.TASK_STATE_CANCELED, `getTask after cancel: ${stateName(got.status.state)}`);
    // Subscribing to a terminal task fails with UnsupportedOperationError.
    let subErr;
    let subEvents = 0;
    try {
      for await (const ev of slowClient.resubscribeTask(SubscribeToTaskRequest.fromJSON({ id: taskId }))) {
        subEvents++;
      }
    } catch (e) {
      subErr = e;
    }
    check(subEvents === 0, `subscribe(canceled task) yielded ${subEvents} events`);
    check(subErr, 'subscribe(canceled task) did not fail');
    check(
      subErr.name === 'UnsupportedOperationError' || /UnsupportedOperation/.test(subErr.constructor.name),
      `subscribe(canceled task) failed with ${subErr.name}/${subErr.constructor.name}: ${subErr.message}`,
    );
    return { taskId, state: stateName(canceled.status.state), lastEvent: describeEvent(last), subscribeTerminalError: subErr.name };
  });

  await step('resubscribeTask', async () => {
    const prompt = `subscribe to this long running turn (${binding})`;
    const res = await slowClient.sendMessage(userMessage(prompt, undefined, { returnImmediately: true }));
    check(isTask(res), 'sendMessage returnImmediately did not return a Task');
    check(
      !TERMINAL.has(res.status.state) && res.status.state !== TaskState.TASK_STATE_INPUT_REQUIRED,
      `sendMessage returnImmediately returned state ${stateName(res.status.state)}, want a running task`,
    );
    const events = await collect(slowClient.resubscribeTask(SubscribeToTaskRequest.fromJSON({ id: res.id })));
    const detail = checkStream(events, prompt, 'resubscribeTask');
    check(detail.taskId === res.id, `resubscribe first Task is ${detail.taskId}, want ${res.id}`);
    return { ...detail, initialState: stateName(res.status.state) };
  });
}

try {
  for (const binding of ['JSONRPC', 'HTTP+JSON']) {
    await runBinding(binding);
  }
} catch (e) {
  failures.push(`unexpected: ${e && e.stack}`);
}
summary.failures = failures;
summary.ok = failures.length === 0;
process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
process.exitCode = summary.ok ? 0 : 1;

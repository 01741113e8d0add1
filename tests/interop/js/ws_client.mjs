// Interop client for the WebSocket JSON-RPC binding (XPORT-3) using the
// `ws` npm package: discovers the websocket interface on the card, then
// over one connection runs a unary SendMessage, two concurrent streams,
// GetTask and a bad-JSON frame. Prints a JSON summary on stdout.
//
//	node ws_client.mjs http://127.0.0.1:PORT TOKEN
import WebSocket from "ws";

const [base, token] = process.argv.slice(2);
const summary = { ok: false, steps: {}, failures: [] };

function fail(msg) {
  summary.failures.push(msg);
}

const card = await (await fetch(base + "/.well-known/agent-card.json", { headers: { "A2A-Version": "1.0" } })).json();
const iface = (card.supportedInterfaces || []).find((i) => i.protocolBinding === "websocket");
if (!iface) {
  fail("the card has no websocket interface");
  console.log(JSON.stringify(summary));
  process.exit(1);
}
summary.steps.card = { url: iface.url };

const sock = new WebSocket(iface.url, { headers: { Authorization: "Bearer " + token, "A2A-Version": "1.0" } });
await new Promise((resolve, reject) => {
  sock.once("open", resolve);
  sock.once("error", reject);
});

// Frames by frame id; waiters resolve on the final frame.
const frames = new Map();
const waiters = new Map();
const order = [];
sock.on("message", (data) => {
  const f = JSON.parse(data.toString());
  const id = JSON.stringify(f.id);
  order.push(id);
  if (!frames.has(id)) frames.set(id, []);
  frames.get(id).push(f);
  if (f.final && waiters.has(id)) {
    waiters.get(id)(frames.get(id));
    waiters.delete(id);
  }
});

function request(id, method, params) {
  const key = JSON.stringify(id);
  const done = new Promise((resolve, reject) => {
    waiters.set(key, resolve);
    setTimeout(() => reject(new Error("no final frame for " + key)), 20000);
  });
  sock.send(JSON.stringify({ id, payload: { jsonrpc: "2.0", id, method, params }, headers: { "A2A-Version": "1.0" } }));
  return done;
}

const msg = (text) => ({ message: { role: "ROLE_USER", messageId: "m-" + text.replace(/\W/g, "-"), parts: [{ text }] } });

try {
  const unary = await request("u1", "SendMessage", msg("hello from ws"));
  const task = unary[0].payload.result.task;
  summary.steps.sendMessage = { frames: unary.length, final: unary[0].final, state: task.status.state, taskId: task.id };

  const [a, b] = await Promise.all([request("sa", "SendStreamingMessage", msg("stream a")), request("sb", "SendStreamingMessage", msg("stream b"))]);
  const lastEvent = (fs) => {
    const ev = fs[fs.length - 2].payload.result;
    return ev.statusUpdate ? "statusUpdate(" + ev.statusUpdate.status.state + ")" : Object.keys(ev)[0];
  };
  const first = (id) => order.indexOf(JSON.stringify(id));
  const final = (id) => order.lastIndexOf(JSON.stringify(id));
  summary.steps.streams = {
    framesA: a.length,
    framesB: b.length,
    lastEventA: lastEvent(a),
    lastEventB: lastEvent(b),
    endsWithBareFinal: !a[a.length - 1].payload && !b[b.length - 1].payload,
    interleaved: first("sb") < final("sa") && first("sa") < final("sb"),
  };

  const got = await request(7, "GetTask", { id: task.id });
  summary.steps.getTask = { id: got[0].payload.result.id, frameId: got[0].id };

  const bad = new Promise((resolve) => waiters.set("null", resolve));
  sock.send("{not json");
  const badFrames = await bad;
  summary.steps.parseError = { code: badFrames[0].payload.error.code };
} catch (e) {
  fail(String(e && e.stack ? e.stack : e));
}
sock.close(1000);
summary.ok = summary.failures.length === 0;
console.log(JSON.stringify(summary));
process.exit(summary.ok ? 0 : 1);

// The one load client of the side-by-side benchmark (Node `ws`; colyseus.js runs on `ws` too).
//
//   NODE_PATH=<cache>/node_modules node loadclient.cjs <scenario> --proto mm|colyseus --url URL[,URL...] [...]
//
// Several URLs (mm only: the processes of one cluster): sockets are opened on each in turn.
//
// scenarios (loopback only, bounded in count and time):
//   echo             --sockets 200 --messages 200        bare echo floor, one message in flight per socket
//   connect-match    --clients 2000 --inflight 50        connect, (hello,) enter, matched in pairs, close
//   match-connected  --clients 2000 --duration 5         mm only: clients past hello enter, match, leave, again
//   relay            --pairs 50 --window 4 --duration 5  pairs in rooms bounce messages A -> B -> A
//   hold             --clients 10000                     clients past hello (mm) / in rooms (colyseus), idle
//
// Prints one JSON line (HOLDING first for hold, then waits for stdin to close; MEASURING
// first for match-connected and relay, when the connections are set up and the load starts). Every
// result carries client_cpu_s: the client's own CPU, so a reader sees when it was the limit.
"use strict";
const WebSocket = require("ws");

const HELLO = '{"id":"h","type":"hello","data":{"v":1,"project":"bench"}}';
const ENTER = '{"id":"e","type":"pool.enter","data":{"policy":"duel"}}';

function parseArgs(argv) {
  const args = { scenario: argv[0], proto: "mm" };
  for (let i = 1; i < argv.length; i += 2) args[argv[i].replace(/^--/, "")] = argv[i + 1];
  for (const key of ["sockets", "messages", "clients", "inflight", "pairs", "window"]) {
    if (key in args) args[key] = Number(args[key]);
  }
  for (const key of ["duration", "warmup"]) if (key in args) args[key] = Number(args[key]);
  args.urls = (args.url || "").split(",");
  if (!args.urls.every((url) => /^(ws|http):\/\/127\.0\.0\.1:\d+/.test(url))) {
    throw new Error("loopback only: --url must be ws://127.0.0.1:<port>...[,ws://127.0.0.1:<port>...]");
  }
  let opened = 0;
  // Several processes of one cluster: each new socket goes to the next URL (a load balancer).
  args.nextUrl = () => args.urls[opened++ % args.urls.length];
  return args;
}

const now = () => performance.now();

function percentile(values, q) {
  if (!values.length) return null;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

// -- our protocol ------------------------------------------------------------------------

function mmOpen(url, onMessage) {
  // Resolves with the socket once hello was answered; onMessage gets every later frame.
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    let greeted = false;
    ws.on("open", () => ws.send(HELLO));
    ws.on("error", reject);
    ws.on("message", (data) => {
      if (!greeted) {
        greeted = true;
        const reply = JSON.parse(data);
        if (!reply.ok) reject(new Error(JSON.stringify(reply)));
        else resolve(ws);
        return;
      }
      onMessage(ws, data.toString());
    });
  });
}

function sessionIdOf(text) {
  const start = text.indexOf('"session_id":"') + 14;
  return text.slice(start, text.indexOf('"', start));
}

// -- Colyseus ----------------------------------------------------------------------------

let colyseus = null;
function colyseusClient(url) {
  colyseus = colyseus || require("colyseus.js");
  return new colyseus.Client(url.replace(/^http/, "ws"));
}

async function colyseusJoin(client, onMatched) {
  const room = await client.joinOrCreate("duel");
  room.onMessage("matched", () => onMatched(room));
  return room;
}

// -- scenarios ---------------------------------------------------------------------------

async function echo(args) {
  const sockets = await Promise.all(
    Array.from({ length: args.sockets }, () => new Promise((resolve, reject) => {
      const ws = new WebSocket(args.url, { perMessageDeflate: false });
      ws.on("open", () => resolve(ws));
      ws.on("error", reject);
    })),
  );
  const payload = JSON.stringify({ type: "ping", data: "x".repeat(40) });
  const started = now();
  await Promise.all(sockets.map((ws) => new Promise((resolve) => {
    let left = args.messages;
    ws.on("message", () => (--left > 0 ? ws.send(payload) : resolve()));
    ws.send(payload);
  })));
  const elapsed = (now() - started) / 1000;
  for (const ws of sockets) ws.terminate();
  return { messages: args.sockets * args.messages, messages_per_s: (args.sockets * args.messages) / elapsed };
}

async function connectMatch(args) {
  const latencies = [];
  let next = 0;
  let errors = 0;
  let lastMatchAt = 0;
  const one = async () => {
    const began = now();
    if (args.proto === "colyseus") {
      await new Promise((resolve, reject) => {
        colyseusJoin(colyseusClient(args.url), (room) => {
          lastMatchAt = now();
          latencies.push(lastMatchAt - began);
          room.leave(true).finally(resolve);
        }).catch(reject);
      });
      return;
    }
    await new Promise((resolve, reject) => {
      mmOpen(args.nextUrl(), (ws, text) => {
        if (text.startsWith('{"type":"session.created"')) {
          lastMatchAt = now();
          latencies.push(lastMatchAt - began);
          ws.close();
          resolve();
        }
      }).then((ws) => ws.send(ENTER), reject);
    });
  };
  const worker = async () => {
    while (next < args.clients) {
      next += 1;
      try {
        await one();
      } catch (error) {
        errors += 1;
      }
    }
  };
  // A client left alone at the end (Colyseus can pair a newcomer with a member that is
  // leaving) would wait forever: stop once nothing progressed for 3 s.
  let stalled;
  let seen = -1;
  const watchdog = new Promise((resolve) => {
    stalled = setInterval(() => {
      if (next >= args.clients && latencies.length === seen) resolve();
      seen = latencies.length;
    }, 3000);
  });
  const started = now();
  await Promise.race([Promise.all(Array.from({ length: args.inflight }, worker)), watchdog]);
  clearInterval(stalled);
  const elapsed = (lastMatchAt - started) / 1000;
  return {
    matched_clients: latencies.length,
    unmatched: args.clients - latencies.length - errors,
    matches_per_s: latencies.length / 2 / elapsed,
    errors,
    latencies_ms: latencies,
  };
}

async function matchConnected(args) {
  if (args.proto !== "mm") throw new Error("match-connected is for our protocol only");
  const latencies = [];
  let sessions = 0;
  let measuring = false;
  const enteredAt = new Map();
  const enter = (ws) => {
    enteredAt.set(ws, now());
    ws.send(ENTER);
  };
  const onMessage = (ws, text) => {
    if (!text.startsWith('{"type":"session.created"')) return;
    if (measuring) {
      latencies.push(now() - enteredAt.get(ws));
      sessions += 0.5;
    }
    ws.send(`{"id":"l","type":"session.leave","data":{"session_id":"${sessionIdOf(text)}"}}`);
    if (measuring) enter(ws);
  };
  const sockets = [];
  for (let i = 0; i < args.clients; i += 200) {
    const batch = Math.min(200, args.clients - i);
    sockets.push(...(await Promise.all(Array.from({ length: batch }, () => mmOpen(args.nextUrl(), onMessage)))));
  }
  measuring = true;
  console.log("MEASURING");
  const started = now();
  for (const ws of sockets) enter(ws);
  await new Promise((resolve) => setTimeout(resolve, args.duration * 1000));
  measuring = false;
  const elapsed = (now() - started) / 1000;
  for (const ws of sockets) ws.terminate();
  return { matched_clients: latencies.length, matches_per_s: sessions / elapsed, latencies_ms: latencies };
}

async function relay(args) {
  const latencies = [];
  let counted = 0;
  let measureFrom = Infinity;
  let stopAt = Infinity;
  const received = (sent, reply) => {
    const t = now();
    if (t >= stopAt) return;
    if (t >= measureFrom) {
      counted += 1;
      if (counted % 8 === 0) latencies.push(t - sent);
    }
    reply(t);
  };
  const senders = [];
  if (args.proto === "colyseus") {
    const client = colyseusClient(args.url);
    for (let i = 0; i < args.pairs; i += 1) {
      for (let k = 0; k < 2; k += 1) {
        const room = await client.joinOrCreate("duel");
        const send = (t) => room.send("relay", t);
        room.onMessage("relay", (t) => received(t, send));
        room.onMessage("matched", () => {});
        senders.push(send);
      }
    }
  } else {
    const onMessage = (ws, text) => {
      if (!text.startsWith('{"type":"session.message"')) return;
      const at = text.indexOf('"data":', text.indexOf('"data":') + 7) + 7;
      received(parseFloat(text.slice(at)), ws.sendAt);
    };
    for (let i = 0; i < args.pairs; i += 1) {
      let sessionId = null;
      for (let k = 0; k < 2; k += 1) {
        let joined;
        const reply = new Promise((resolve) => (joined = resolve));
        const ws = await mmOpen(args.nextUrl(), (socket, text) => (socket.joining ? socket.joining(text) : onMessage(socket, text)));
        ws.joining = joined;
        // Named per process: two load-client processes must not join each other's sessions.
        ws.send(`{"id":"j","type":"session.join","data":{"session":"r${process.pid}-${i}","create":true}}`);
        sessionId = JSON.parse(await reply).data.session_id;
        ws.joining = null;
        const prefix = `{"type":"session.send","data":{"session_id":"${sessionId}","data":`;
        ws.sendAt = (t) => ws.send(`${prefix}${t}}}`);
        senders.push(ws.sendAt);
      }
    }
  }
  console.log("MEASURING");
  const started = now();
  measureFrom = started + args.warmup * 1000;
  stopAt = measureFrom + args.duration * 1000;
  for (const send of senders) for (let w = 0; w < args.window; w += 1) send(now());
  await new Promise((resolve) => setTimeout(resolve, (args.warmup + args.duration) * 1000 + 200));
  return { messages: counted, messages_per_s: counted / args.duration, latencies_ms: latencies };
}

async function hold(args) {
  const started = now();
  const held = [];
  for (let i = 0; i < args.clients; i += 200) {
    const batch = Math.min(200, args.clients - i);
    if (args.proto === "colyseus") {
      const client = colyseusClient(args.url);
      held.push(...(await Promise.all(Array.from({ length: batch }, () => colyseusJoin(client, () => {})))));
    } else {
      held.push(...(await Promise.all(Array.from({ length: batch }, () => mmOpen(args.nextUrl(), () => {})))));
    }
  }
  const connectS = (now() - started) / 1000;
  console.log("HOLDING");
  await new Promise((resolve) => {
    process.stdin.on("end", resolve);
    process.stdin.resume();
  });
  return { connected: held.length, connect_s: connectS };
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const scenarios = { echo, "connect-match": connectMatch, "match-connected": matchConnected, relay, hold };
  const cpu0 = process.cpuUsage();
  const wall0 = now();
  const result = await scenarios[args.scenario](args);
  const cpu = process.cpuUsage(cpu0);
  result.client_cpu_s = (cpu.user + cpu.system) / 1e6;
  result.client_wall_s = (now() - wall0) / 1000;
  process.stdout.write(JSON.stringify(result) + "\n", () => process.exit(0));
}

const deadline = setTimeout(() => {
  console.error("loadclient: gave up after 300 s");
  process.exit(2);
}, 300_000);
deadline.unref();
main().catch((error) => {
  console.error(error);
  process.exit(1);
});

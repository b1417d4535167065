// The Node floor: a bare `ws` echo server (the transport Colyseus runs on).
//
//   NODE_PATH=<cache>/node_modules node echo_server.cjs <port>
"use strict";
const { WebSocketServer } = require("ws");

const port = Number(process.argv[2]);
const server = new WebSocketServer({ host: "127.0.0.1", port, perMessageDeflate: false });
server.on("connection", (ws) => ws.on("message", (data, binary) => ws.send(data, { binary })));
server.on("listening", () => console.log(`listening ${port}`));
for (const signal of ["SIGTERM", "SIGINT"]) process.on(signal, () => process.exit(0));

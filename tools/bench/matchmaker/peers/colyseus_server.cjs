// The Colyseus peer of the matchmaker benchmark: 2-player rooms that relay messages.
//
//   NODE_PATH=<cache>/node_modules node colyseus_server.cjs <port>
//
// "duel" rooms take two clients (joinOrCreate fills the open room first); once both
// are in, the room broadcasts "matched" (the equivalent of our session.created), and
// every "relay" message goes to the other member (our session.send). No state schema:
// the relay path measures the transport and the room, not state sync.
"use strict";
const { Server, Room } = require("@colyseus/core");
const { WebSocketTransport } = require("@colyseus/ws-transport");

class Duel extends Room {
  onCreate() {
    this.maxClients = 2;
    this.onMessage("relay", (client, message) => {
      for (const other of this.clients) {
        if (other !== client) other.send("relay", message);
      }
    });
  }

  onJoin() {
    if (this.clients.length === 2) this.broadcast("matched", this.roomId);
  }
}

const port = Number(process.argv[2]);
const server = new Server({ transport: new WebSocketTransport({ perMessageDeflate: false }) });
server.define("duel", Duel);
server.listen(port, "127.0.0.1").then(() => console.log(`listening ${port}`));
for (const signal of ["SIGTERM", "SIGINT"]) process.on(signal, () => process.exit(0));

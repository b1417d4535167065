"""Parties across members, sans I/O: a party held on one member, its entry at the pool's owner.

A party lives on the member that minted its code (:func:`~.ring.code_key` chooses
which codes a member may mint), its *holder*: ``party.join`` goes there by the
code, ``party.leave`` by the party id, so every join and leave is one step of the
holder's core, in order, whatever member its client is connected to (the holder
serves it through a proxy, as a pool's owner does).

Its entry must wait in the pool's one core, at the pool's owner. So the holder
sends its leader's ``pool.enter`` there with a :class:`~matchmaker.core.commands.PartyView`
(who the members are): the owner makes proxies of the members it does not know,
tells their homes it holds them (:class:`~.messages.Hold`, so it hears when one is
away, back or gone, as for any proxy) and keeps a mirror of the party that carries
the entry (:meth:`~matchmaker.core.parties.Parties.mirror`). A leader connected to
the holder sends it so at once; one connected elsewhere sends its ``pool.enter`` to
the holder, which passes it on (and its ``pool.leave`` likewise); the owner answers
the leader's home, a refusal through the holder. The holder follows the entry it
passed on, entering it again at a new owner when its pool moves, until it waits
nowhere (refused, lost, left, its leader matched or gone, or closed at the owner:
expired, or its pool closed, as the leader's home tells it: :class:`~.messages.PartyClosed`).
When the party changes at the holder, its core notes it
(:class:`~matchmaker.core.parties.PartyChanged`) and the owner withdraws the entry
(:class:`~.messages.PartyWithdraw`): ``party_changed`` for every member, as one
process says; it is on its way out from then on, moved or entered again by nobody.
A member gone (or its member dead) is gone at the owner too, whose mirror withdraws
the entry itself.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import msgspec

from matchmaker.cluster import codec
from matchmaker.cluster.messages import (
    Answers,
    Away,
    Back,
    Command,
    Gone,
    Hold,
    Message,
    PartyClosed,
    PartyWithdraw,
    Withdraw,
)
from matchmaker.cluster.ring import node_of, pool_key
from matchmaker.cluster.routes import INTERNAL, NOTHING, Action, Deliver, Post, Routes, Waiting
from matchmaker.core import Delivery
from matchmaker.core.commands import EnterPool, LeavePool, PartyView
from matchmaker.core.state import ClientState

__all__ = ["PartyRouting"]


class PartyRouting:
    """Parties on the routing state: entries sent to pools' owners, relayed requests,
    the members' proxies at those owners, and withdrawals when a party changes."""

    def __init__(self, routes: Routes) -> None:
        self.routes = routes
        parties = routes.core.parties
        parties.notes = True
        parties.placed = routes.placed
        # (client id, pool name) -> the member a remote leader's party entry was relayed
        # to, the request that carried it (sent again if the pool's owner changes), and
        # the id of the leader's request (as its home knows the entry: :meth:`on_closed`).
        self.relayed: dict[tuple[str, str], tuple[str, Command, str | None]] = {}

    # -- at the party's holder ----------------------------------------------------------------

    def attach(self, client: ClientState, command: EnterPool) -> EnterPool:
        """A local leader's ``pool.enter`` for a party held here, with the party's view (for
        the pool's owner); any other command as it is."""
        if command.party_id is None or command.party is not None:
            return command
        view = self.routes.core.parties.view(client, command.party_id)
        return command if view is None else dataclasses.replace(command, party=view)

    def changed(self, party_id: str) -> Sequence[Action]:
        """The holder's core noted the party changed: an entry it waits with elsewhere is
        withdrawn there. Every other member is told (a party changes rarely, and its entry
        may have moved with its pool since it was sent).

        Until that member says it is gone, the entry is on its way out: a local leader's
        is no longer moved or entered again (:meth:`.Waiting.withdraw`), nor is a remote
        leader's relayed from here, as one process would have let go of it by then. One
        whose member died, not entered again yet (its leader is away), is withdrawn here:
        its members are told, as that member would have told them.
        """
        routes = self.routes
        out: list[Action] = [
            Post(node, PartyWithdraw(party_id)) for node in sorted(routes.live - {routes.node})
        ]
        for _, entry in routes.again.values():
            if entry.command.party_id == party_id:
                entry.withdraw("party_changed")
        for waiting in routes.waiting.values():
            for name, entry in list(waiting.items()):
                if entry.command.party_id != party_id:
                    continue
                entry.withdraw("party_changed")
                view = entry.command.party
                if not entry.node and view is not None:
                    del waiting[name]
                    members = [member.client_id for member in view.members]
                    out.append(Deliver([(members, entry.withdrawal(name))]))
        for key, (_, message, _) in list(self.relayed.items()):
            if message.command[1].get("party_id") == party_id:
                del self.relayed[key]
        return out

    def relay(self, home: str, message: Command, now_ms: int) -> Sequence[Action] | None:
        """A remote client's ``pool.enter`` for a party held here whose pool another member
        owns (or its ``pool.leave`` of such an entry): passed on there, and followed from
        here (:meth:`answered`, :meth:`lost`, :meth:`moved`, :meth:`follow`). ``None``: not
        such a request, served here."""
        kind = message.command[0]
        if kind not in ("EnterPool", "LeavePool"):
            return None
        routes = self.routes
        client = routes.core.clients.get(message.client)
        command = codec.decode_value(message.command)
        if client is None:
            return None
        if isinstance(command, LeavePool):
            relayed = self.relayed.pop((client.client_id, command.pool), None)
            return None if relayed is None else [Post(relayed[0], message)]
        if command.party is not None:
            # Sent with its view by its holder to the pool's owner as that one saw it: served
            # here, and moved by whoever sent it, as any entry at a former owner.
            return None
        attached = self.attach(client, command)
        if attached.party is None:
            return None
        name = attached.policy or attached.pool or routes.default_policy(client) or ""
        node = routes.owner_of(pool_key(client.project_id, name))
        if node == routes.node:
            return None
        forwarded = msgspec.structs.replace(message, command=codec.encode_value(attached))
        self.relayed[client.client_id, name] = (node, forwarded, message.request_id)
        return [Post(node, forwarded)]

    def answered(self, message: Answers) -> None:
        """Answers on their way through here to a remote client's home: a party entry passed
        on from here and refused there (by the pool's owner, or a new owner it moved to:
        :meth:`refusals_to`) waits nowhere, so it is no longer followed (nor entered again
        when its pool moves)."""
        client_id = message.client
        for key, (_, relayed, _) in list(self.relayed.items()):
            if key[0] == client_id and any(
                effect[0] == "refuse" and effect[1] == relayed.request_id
                for effect in message.effects
            ):
                del self.relayed[key]

    def lost(self, message: Message) -> None:
        """Redis did not take ``message``: a party entry it passed on from here waits
        nowhere, so it is no longer followed (its leader's request is refused at its home
        by the timeout)."""
        for key, (_, relayed, _) in list(self.relayed.items()):
            if relayed == message:
                del self.relayed[key]

    def moved(self, now_ms: int) -> Sequence[Action]:
        """The live members changed: a relayed party entry whose pool has another owner now
        is entered again there (left first at its old owner, if that one lives), answering
        nobody, as a local client's entry is moved (:mod:`.failover`)."""
        routes = self.routes
        out: list[Action] = []
        for key, (node, message, asked) in list(self.relayed.items()):
            client = routes.core.clients.get(key[0])
            proxy = routes.proxies.get(key[0])
            if client is None or proxy is None:
                del self.relayed[key]
                continue
            new = routes.owner_of(pool_key(client.project_id, key[1]))
            if new == node:
                continue
            if node in routes.live:
                leave = codec.encode_value(LeavePool(key[1]))
                out.append(
                    Post(node, msgspec.structs.replace(message, request_id=INTERNAL, command=leave))
                )
            again = msgspec.structs.replace(message, request_id=INTERNAL)
            if new == routes.node:  # the pool is this member's now: entered here
                del self.relayed[key]
                effects = proxy[1].receive(codec.decode_value(again.command), INTERNAL, now_ms)
                out.append(Deliver([e for e in effects if isinstance(e, tuple)]))
            else:
                self.relayed[key] = (new, again, asked)
                out.append(Post(new, again))
        return out

    def follow(self, message: Away | Back | Gone | Withdraw) -> Sequence[Action]:
        """A remote leader whose party entry was relayed from here went away, came back, is
        gone or was matched: the pool's owner, which only knows it through this member,
        hears it too. Gone or matched, its entries are no longer followed here."""
        client_id = message.client
        nodes = {node for (cid, _), (node, _, _) in self.relayed.items() if cid == client_id}
        if type(message) is Gone or type(message) is Withdraw:
            for key in [k for k in self.relayed if k[0] == client_id]:
                del self.relayed[key]
        return [Post(node, message) for node in sorted(nodes & self.routes.live)]

    def on_closed(self, sender: str, message: PartyClosed, now_ms: int) -> Sequence[Action]:
        """The leader's home says the party entry passed on from here for its request closed
        at the pool's owner (:meth:`closed`): no longer followed, nor entered again when
        its pool moves. One passed on for a later request stays followed."""
        key = (message.client, message.pool)
        relayed = self.relayed.get(key)
        if relayed is not None and relayed[2] == message.request:
            del self.relayed[key]
        return NOTHING

    # -- at the leader's home -----------------------------------------------------------------

    def closed(self, client_id: str, name: str, entry: Waiting) -> Sequence[Action]:
        """A local client's entry in pool ``name`` closed (it expired, its pool closed, it
        was withdrawn): if it is a party entry that the party's holder passed on, the
        holder, which follows it and hears of none of those from the pool's owner, is
        told (:class:`~.messages.PartyClosed`)."""
        command, holder = entry.command, entry.node
        if command.party_id is None or command.party is not None:
            return NOTHING  # not passed on by a holder: sent to the pool's owner from here
        if holder == self.routes.node or holder not in self.routes.live:
            return NOTHING
        return [Post(holder, PartyClosed(client_id, name, entry.asked))]

    # -- at the pool's owner ------------------------------------------------------------------

    def refusals_to(self, sender: str, message: Command) -> str | None:
        """Where a refusal of a request from ``sender`` goes, if not to its client's home: a
        party's ``pool.enter`` with its view came from the party's holder, which follows the
        entry it passed on (:meth:`answered`) and relays the refusal home. (Its other
        answers go home directly, ahead of the events they come with: a ``session.created``
        never overtakes the ``pool.entered`` before it.)"""
        if message.command[0] != "EnterPool" or message.command[1].get("party") is None:
            return None
        return sender

    def members(self, message: Command, now_ms: int) -> Sequence[Action]:
        """A party's ``pool.enter`` arrived with its view: make proxies of the members not
        known here, and tell their homes this member holds them."""
        if message.command[0] != "EnterPool" or message.command[1].get("party") is None:
            return NOTHING
        view = codec.decode_value(message.command).party
        assert isinstance(view, PartyView)
        routes = self.routes
        out: list[Action] = []
        for member in view.members:
            home = node_of(member.client_id)
            if member.client_id in routes.core.clients or home is None:
                continue  # connected here, or known already
            conversation = routes.conversation(now_ms)
            conversation.adopt(
                member.client_id,
                message.project,
                member.credential,
                member.attributes,
                player_id=member.player_id,
            )
            routes.proxies[member.client_id] = (home, conversation)
            out.append(Post(home, Hold(member.client_id)))
        return out

    def on_withdraw(self, sender: str, message: PartyWithdraw, now_ms: int) -> Sequence[Action]:
        """The party's holder says it changed: its entry here is withdrawn for all."""
        out: list[Delivery] = []
        self.routes.core.parties.withdraw_mirror(message.party, out)
        return [Deliver(out)] if out else NOTHING

// The data plane's wire types, generated from the msgspec Structs of
// matchmaker.data.protocol (and the core's mode events and answers) by
// tests/matchmaker/data/js_protocol.py: do not edit. tests/matchmaker/data/test_js_protocol.py
// fails when this file is not what the Structs render.

export interface Resume {
  token: string;
  last_seq?: number;
}

export interface HelloData {
  v: number;
  project?: string | null;
  credential?: string | null;
  attributes?: { [key: string]: string | number | boolean };
  resume?: Resume | null;
}

export interface Heartbeat {
  interval_ms: number;
  timeout_ms: number;
}

export interface Limits {
  max_frame_bytes: number;
  max_send_bytes: number;
  max_attributes: number;
  max_attribute_value_chars: number;
  max_pools_per_client: number;
  max_sessions_per_client: number;
  max_session_members: number;
  outbound_queue: number;
  handshake_timeout_s: number;
  entry_ttl_ms: number;
  heartbeat_interval_ms: number;
  heartbeat_timeout_ms: number;
  control_rate_per_s: number;
  control_burst: number;
  send_rate_per_s: number;
  send_burst: number;
  proposal_ttl_ms: number;
  max_open_proposals: number;
  max_pending_proposals: number;
  delegate_grace_ms: number;
  resume_grace_ms: number;
  resume_buffer_bytes: number;
  rtc_peers_per_connection: number;
  max_party_members: number;
  max_parties_per_client: number;
  max_parties_per_project: number;
}

export interface Widen {
  everyMs: number;
  by: number;
  max: number;
}

export interface RangeRule {
  within: number;
  widen?: Widen | null;
}

export interface Team {
  name: string;
  size: number;
}

export interface Balance {
  attribute: string;
  maxDifference: number;
  widen?: Widen | null;
}

export interface Regions {
  maxLatencyMs: number;
  widen?: Widen | null;
}

export interface PolicyInfo {
  name: string;
  mode: string;
  groupSize: number;
  default: boolean;
  minGroupSize?: number | null;
  fillTimeoutMs?: number | null;
  windows?: { [key: string]: RangeRule } | null;
  teams?: Team[] | null;
  balance?: Balance | null;
  regions?: Regions | null;
}

export interface IceServer {
  urls: string[];
}

export interface HelloReply {
  client_id: string;
  resume_token: string;
  project: string;
  heartbeat: Heartbeat;
  limits: Limits;
  policies: PolicyInfo[];
  lockdown: boolean;
  resumed: boolean;
  ice_servers: IceServer[];
  player_id: string | null;
}

export interface PoolEnterData {
  policy?: string | null;
  pool?: string | null;
  create?: boolean;
  mode?: "auto" | "claim" | "delegated" | "mutual" | "propose" | null;
  groupSize?: number | null;
  filter?: { [key: string]: string | number | boolean | RangeRule } | null;
  minGroupSize?: number | null;
  fillTimeoutMs?: number | null;
  ttl_ms?: number | null;
  public?: { [key: string]: unknown } | null;
  listed?: boolean;
  party_id?: string | null;
  teams?: Team[] | null;
  balance?: Balance | null;
  regions?: Regions | null;
  latencies?: { [key: string]: number } | null;
}

export interface PoolEntered {
  pool: string;
  entry_id: string;
  mode: string;
  groupSize: number;
  expires_at: number;
}

export interface PoolLeaveData {
  pool: string;
}

export interface PoolLeft {
  pool: string;
  entry_id: string;
}

export interface SessionJoinData {
  session: string;
  create?: boolean;
  public?: { [key: string]: unknown } | null;
}

export interface SessionJoined {
  session_id: string;
  created: boolean;
}

export interface SessionLeaveData {
  session_id: string;
}

export interface SessionLeft {
  session_id: string;
}

export interface SessionBackfillData {
  session_id: string;
  seats: number;
}

export interface Backfilled {
  session_id: string;
  filled: string[];
  pending: number;
}

export interface SessionSendData {
  session_id: string;
  data: unknown;
  to?: string[] | null;
}

export interface RelayReply {
  duplicate?: boolean;
}

export interface RtcSignalData {
  session_id: string;
  to: string;
  signal: unknown;
}

export interface RtcOfferData {
  sdp: string;
}

export interface ChannelAnswer {
  sdp: string;
  type: string;
}

export interface PoolListData {
  pool: string;
  cursor?: string | null;
  limit?: number;
}

export interface Listing {
  client_id: string;
  public: { [key: string]: unknown } | null;
  waited_ms: number;
}

export interface ListPage {
  pool: string;
  entries: Listing[];
  cursor: string | null;
}

export interface PoolWatchData {
  pool: string;
  watch?: boolean;
}

export interface Watching {
  pool: string;
  watching: boolean;
}

export interface ClaimMakeData {
  pool: string;
  targets: string[];
}

export interface Claimed {
  pool: string;
  session_id: string;
}

export interface PickData {
  pool: string;
  target: string;
}

export interface Picked {
  pool: string;
  picks: string[];
  session_id: string | null;
}

export interface ProposalCreateData {
  pool: string;
  members: string[];
  ttl_ms?: number | null;
}

export interface ProposalMade {
  proposal_id: string;
  expires_at: number;
}

export interface ProposalRespondData {
  proposal_id: string;
  accept: boolean;
}

export interface ProposalAnswered {
  proposal_id: string;
  state: string;
  session_id: string | null;
}

export interface ProposalCancelData {
  proposal_id: string;
}

export interface DelegateAttachData {
  pool: string;
}

export interface Attached {
  pool: string;
  version: number;
}

export interface DelegateFormData {
  pool: string;
  groups: string[][];
}

export interface FormResult {
  ok: boolean;
  session_id: string | null;
  error: { [key: string]: unknown } | null;
}

export interface Formed {
  pool: string;
  results: FormResult[];
}

export interface PartyCreateData {
}

export interface PartyMember {
  client_id: string;
  player_id: string | null;
}

export interface PartyCreated {
  party_id: string;
  code: string;
  leader: string;
  members: PartyMember[];
}

export interface PartyJoinData {
  code: string;
}

export interface PartyInfo {
  party_id: string;
  code: string;
  leader: string;
  members: PartyMember[];
}

export interface PartyLeaveData {
  party_id: string;
}

export interface PartyLeft {
  party_id: string;
}

export interface MemberInfo {
  client_id: string;
  public?: { [key: string]: unknown } | null;
  player_id?: string | null;
}

export interface SessionCreatedData {
  session_id: string;
  members: MemberInfo[];
  you: string;
  pool?: string | null;
  teams?: { [key: string]: string[] } | null;
  region?: string | null;
}

export interface SessionMessageData {
  session_id: string;
  from: string;
  data: unknown;
}

export interface MemberData {
  session_id: string;
  client_id: string;
  public?: { [key: string]: unknown } | null;
  reason?: string | null;
  player_id?: string | null;
  team?: string | null;
}

export interface EntryData {
  pool: string;
  entry_id: string;
  reason?: string | null;
}

export interface SignalData {
  session_id: string;
  from: string;
  signal: unknown;
}

export interface PoolListed {
  pool: string;
  entry: Listing;
}

export interface PoolUnlisted {
  pool: string;
  client_id: string;
  reason: string;
}

export interface PublicMember {
  client_id: string;
  public: { [key: string]: unknown } | null;
  player_id: string | null;
}

export interface ProposalReceived {
  proposal_id: string;
  pool: string;
  proposer: string;
  members: PublicMember[];
  expires_at: number;
}

export interface ProposalUpdated {
  proposal_id: string;
  client_id: string;
  accepted: boolean;
  pending: string[];
}

export interface ProposalClosed {
  proposal_id: string;
  reason: string;
  client_id: string | null;
}

export interface DelegateEntry {
  entry_id: string;
  client_id: string;
  attributes: { [key: string]: unknown };
  public: { [key: string]: unknown } | null;
  entered_at: number;
}

export interface PoolSnapshot {
  pool: string;
  version: number;
  entries: DelegateEntry[];
}

export interface PoolDelta {
  pool: string;
  version: number;
  added: DelegateEntry[];
  removed: string[];
}

export interface MemberStatus {
  session_id: string;
  client_id: string;
  status: "away" | "back";
}

export interface ResumePartial {
  from_seq: number;
  to_seq: number;
}

export interface PoolNoDelegate {
  pool: string;
  entry_id: string;
}

export interface PartyMemberJoined {
  party_id: string;
  client_id: string;
  player_id: string | null;
}

export interface PartyMemberLeft {
  party_id: string;
  client_id: string;
  reason: string;
  leader: string;
}

export interface PartyEntered {
  party_id: string;
  pool: string;
  entry_id: string;
}

export interface ErrorBody {
  code: string;
  message: string;
  details?: { [key: string]: unknown } | null;
}

/** Every request type: the `data` it sends and the `data` of its reply. */
export interface Requests {
  "hello": { data: HelloData; reply: HelloReply };
  "ping": { data: undefined; reply: null };
  "pong": { data: undefined; reply: null };
  "bye": { data: undefined; reply: null };
  "pool.enter": { data: PoolEnterData; reply: PoolEntered };
  "pool.leave": { data: PoolLeaveData; reply: PoolLeft };
  "session.join": { data: SessionJoinData; reply: SessionJoined };
  "session.leave": { data: SessionLeaveData; reply: SessionLeft };
  "session.backfill": { data: SessionBackfillData; reply: Backfilled };
  "session.send": { data: SessionSendData; reply: RelayReply };
  "rtc.signal": { data: RtcSignalData; reply: RelayReply };
  "rtc.offer": { data: RtcOfferData; reply: ChannelAnswer };
  "pool.list": { data: PoolListData; reply: ListPage };
  "pool.watch": { data: PoolWatchData; reply: Watching };
  "claim.make": { data: ClaimMakeData; reply: Claimed };
  "pick.add": { data: PickData; reply: Picked };
  "pick.remove": { data: PickData; reply: Picked };
  "proposal.create": { data: ProposalCreateData; reply: ProposalMade };
  "proposal.respond": { data: ProposalRespondData; reply: ProposalAnswered };
  "proposal.cancel": { data: ProposalCancelData; reply: ProposalAnswered };
  "delegate.attach": { data: DelegateAttachData; reply: Attached };
  "delegate.form": { data: DelegateFormData; reply: Formed };
  "party.create": { data: PartyCreateData | null; reply: PartyCreated };
  "party.join": { data: PartyJoinData; reply: PartyInfo };
  "party.leave": { data: PartyLeaveData; reply: PartyLeft };
}

/** Every event (server push) type and its `data`. */
export interface Events {
  "session.created": SessionCreatedData;
  "session.message": SessionMessageData;
  "session.member_joined": MemberData;
  "session.member_left": MemberData;
  "pool.withdrawn": EntryData;
  "pool.expired": EntryData;
  "pool.closed": EntryData;
  "rtc.signal": SignalData;
  "pool.listed": PoolListed;
  "pool.unlisted": PoolUnlisted;
  "proposal.received": ProposalReceived;
  "proposal.updated": ProposalUpdated;
  "proposal.closed": ProposalClosed;
  "pool.snapshot": PoolSnapshot;
  "pool.delta": PoolDelta;
  "session.member_status": MemberStatus;
  "resume.partial": ResumePartial;
  "pool.no_delegate": PoolNoDelegate;
  "party.member_joined": PartyMemberJoined;
  "party.member_left": PartyMemberLeft;
  "party.entered": PartyEntered;
}

/** The `error` of a failed reply. */
export type WireError = ErrorBody;

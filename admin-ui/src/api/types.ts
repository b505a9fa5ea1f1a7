// Typed models of the admin API v1 (docs/api.md in the repository is the contract).

export type Role = 'admin' | 'analyst' | 'holder';
export type ReviewStatus = 'new' | 'confirmed' | 'dismissed' | 'takedown_sent' | 'licensed';
/** The kind of copy a match records (decided by the matcher). */
export type MatchKind = 'identical' | 'near_duplicate' | 'excerpt' | 'embedded';
/** The verdict's own kind (which text lies inside which), shown in a match's detail. */
export type VerdictKind = 'identical' | 'near_duplicate' | 'a_within_b' | 'b_within_a' | 'unrelated';
export type TaskState = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

/** Every status a match can have (filters); `licensed` is set by the holder's licensed domains, never by review. */
export const REVIEW_STATUSES: ReviewStatus[] = ['new', 'confirmed', 'dismissed', 'takedown_sent', 'licensed'];
export const MATCH_KINDS: MatchKind[] = ['identical', 'near_duplicate', 'embedded', 'excerpt'];

/** Unix milliseconds, UTC. */
export type Millis = number;

export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

export interface Me {
  key_id: number;
  name: string | null;
  role: Role;
  owner: string | null;
  expires_at: Millis | null;
  created_at: Millis;
}

export interface Stats {
  from: string;
  to: string;
  total: number;
  /** Of `total`: copies on the holders' licensed domains, counted apart. */
  licensed?: number;
  /** Of `total`: neither licensed nor dismissed. */
  infringing?: number;
  new_today: number;
  new_this_week: number;
  by_status: Partial<Record<ReviewStatus, number>>;
  /** Matches first seen in the range, by kind of copy. */
  by_kind?: Partial<Record<MatchKind, number>>;
  by_day: { day: string; count: number }[];
  top_sites: { site: string; count: number }[];
  top_works: { work_id: number; title: string; owner: string; count: number }[];
  /** `pages` is null for holders. */
  totals: { works: number; pages: number | null; matches_all_time: number };
}

export interface WorkItem {
  id: number;
  owner: string;
  external_id: string;
  title: string;
  author: string;
  section_count: number;
  match_count: number;
}

export interface SectionItem {
  id: number;
  ordinal: number;
  title: string;
  chars: number;
  char_start: number;
  char_end: number;
  match_count: number;
}

export interface WorkDetail {
  id: number;
  owner: string;
  external_id: string;
  title: string;
  author: string;
  source_file: string | null;
  charset: string | null;
  chars: number;
  created_at: Millis;
  updated_at: Millis;
  match_count: number;
  sections: SectionItem[];
}

export interface SectionText {
  id: number;
  work_id: number;
  ordinal: number;
  title: string;
  text: string;
  char_start: number;
  char_end: number;
}

export interface NewWorkBody {
  owner?: string;
  external_id: string;
  title: string;
  author: string;
  text: string;
}

export interface WorkSaved {
  id: number;
  outcome: 'inserted' | 'updated' | 'changed' | 'unchanged' | string;
  section_count: number;
  title?: string;
  external_id?: string;
}

export interface UploadResult {
  works: WorkSaved[];
  imported?: number;
  updated?: number;
  unchanged?: number;
  rejected?: { item: string; reason: string }[];
}

export interface MatchItem {
  id: number;
  work_id: number;
  work_title: string;
  owner: string;
  section_id: number;
  section_ordinal: number;
  section_title: string;
  page_id: number;
  url: string;
  site: string;
  kind: MatchKind;
  score: number;
  duplicate: boolean;
  copied_chars: number;
  coverage: number;
  first_seen: Millis;
  last_seen: Millis;
  status: ReviewStatus;
}

export interface PassageSide {
  start: number;
  end: number;
  text: string;
  before: string;
  after: string;
  /** The same pieces without markup, for a quote from an HTML page (offsets count the verbatim ones). */
  visible?: { text: string; before: string; after: string };
}

export interface Passage {
  chars: number;
  work: PassageSide;
  page: PassageSide;
}

export interface ReviewEvent {
  by: string;
  at: Millis;
  from: ReviewStatus;
  to: ReviewStatus;
  note: string | null;
}

export interface MatchDetail {
  match: MatchItem & { verdict_kind?: VerdictKind };
  scores: {
    resemblance?: number;
    containment_ab?: number;
    containment_ba?: number;
    dna_score?: number;
    minhash_similarity?: number;
    simhash_distance?: number;
    winnow_containment_ab?: number;
    evidence_coverage_a?: number;
    evidence_coverage_b?: number;
    copied_chars?: number;
  };
  explanation: { zh: string; en: string; reasons?: { zh: string[]; en: string[] } };
  passages: Passage[];
  review_log: ReviewEvent[];
}

export interface BulkReviewResult {
  updated: number[];
  unchanged: number[];
  not_found: number[];
  /** Left as they are: their status follows the holder's licensed domains. */
  licensed?: number[];
}

export interface Task {
  id: number;
  key: string;
  kind: 'match' | 'crawl' | string;
  state: TaskState;
  progress: { done: number; total: number; failed: number };
  percent: number | null;
  params: unknown;
  error: string | null;
  created_at: Millis;
  started_at: Millis | null;
  finished_at: Millis | null;
  updated_at: Millis;
}

export type MatchSort =
  | '-last_seen'
  | 'last_seen'
  | '-score'
  | 'score'
  | '-id'
  | 'id'
  | '-first_seen'
  | 'first_seen';

/** The filters of the match list (and of its exports). */
export interface MatchFilters {
  work_id?: number;
  section_id?: number;
  site?: string;
  kind?: string;
  status?: ReviewStatus;
  min_score?: number;
  max_score?: number;
  /** `YYYY-MM-DD`, last seen on or after. */
  from?: string;
  /** `YYYY-MM-DD`, last seen on or before (inclusive). */
  to?: string;
  owner?: string;
  sort?: MatchSort;
}

/** A file of an evidence capture (stored by its SHA-256). */
export interface CaptureFile {
  name: string;
  media_type: string;
  size: number;
  sha256: string;
}

/** The capture record (the evidence log's leaf), as far as the dashboard reads it. */
export interface CaptureRecord {
  source?: 'fetched' | 'stored' | string;
  final_url?: string | null;
  remote_ip?: string | null;
  notes?: string[];
  [k: string]: unknown;
}

/** One evidence capture of a match: a WARC of the page, and a screenshot and print of a live one. */
export interface Capture {
  id: number;
  match_id: number;
  leaf_index: number;
  /** RFC 3339. */
  captured_at: string;
  reason: 'first_match' | 'on_demand' | string;
  url: string;
  files: CaptureFile[];
  pruned_at: string | null;
  record: CaptureRecord | null;
}

export interface CaptureList {
  items: Capture[];
  /** The automatic capture of a new match is queued and not done yet. */
  first_capture_pending: boolean;
  /** The evidence log's public key (hex), for verifying packages offline. */
  public_key: string;
}

export interface CaptureRequested {
  task_id: number;
  key: string;
  state: TaskState;
}

/** A capture's package checked as a third party checks it. */
export interface Verification {
  capture_id: number;
  ok: boolean;
  summary: string;
  checks: { what: string; ok: boolean; detail: string }[];
  package_bytes: number;
  tree_size: number;
  public_key: string;
}

// ---------------------------------------------------------------------------------------
// Rights holders, takedown notices, removal tracking.

/** A holder's contact details, as a notice states them. */
export interface HolderProfile {
  legal_name: string;
  contact_person: string;
  address: string;
  phone: string;
  email: string;
}

/** A document proving the holder's rights, kept under its SHA-256. */
export interface HolderDocument {
  name: string;
  sha256: string;
  media_type: string;
  size: number;
  uploaded_at: Millis;
  uploaded_by: string;
}

/** A domain allowed to carry the holder's works (`work_id`: only that work). */
export interface LicensedDomain {
  domain: string;
  work_id?: number | null;
  added_at: Millis;
  added_by: string;
}

/** A holder's e-mail alerts of new matches (no recipient: off). */
export interface AlertSettings {
  recipients: string[];
  /** Only new matches with at least this score (0 to 1). */
  min_score: number;
  /** An e-mail when a task finds new matches, or one a day. */
  mode: 'immediate' | 'digest';
  /** Most e-mails per hour (1 to 60); matches over the limit go out in the next one. */
  max_per_hour: number;
  lang: 'zh-CN' | 'en';
}

/** A rights holder; `version` 0: nothing stored yet. Writes name the version they read. */
export interface Holder {
  owner: string;
  profile: HolderProfile;
  documents: HolderDocument[];
  licensed: LicensedDomain[];
  /** Absent from servers before alerts. */
  alerts?: AlertSettings;
  version: number;
  updated_at: Millis;
  updated_by: string;
}

export interface LicensedSaved {
  holder: Holder;
  /** Matches now `licensed`, and matches no longer licensed (back to `new`). */
  relabelled: { licensed: number; unlicensed: number };
}

export type NoticeState = 'draft' | 'sending' | 'sent' | 'exported' | 'cancelled';
export const NOTICE_STATES: NoticeState[] = ['draft', 'sending', 'sent', 'exported', 'cancelled'];
export type NoticeLang = 'zh-CN' | 'en';

export interface NoticeFile {
  name: string;
  media_type: string;
  size: number;
  sha256: string;
}

/** A takedown notice: one holder's confirmed matches on one site (or on several sites of one hosting provider). */
export interface Notice {
  id: number;
  key: string;
  owner: string;
  site: string;
  /** Every site of a notice to a hosting provider (absent: `site` alone). */
  sites?: string[];
  lang: NoticeLang | string;
  state: NoticeState;
  match_ids: number[];
  page_ids: number[];
  subject: string;
  recipient: string | null;
  files: NoticeFile[];
  follow_up_of: number | null;
  created_by: string;
  created_at: Millis;
  message_id: string;
  sent_at: Millis | null;
  sent_by: string | null;
  smtp_response: string | null;
  version: number;
}

export interface DraftNoticeBody {
  owner?: string;
  site: string;
  /** Other sites of the same hosting provider, in the same notice. */
  provider_sites?: string[];
  match_ids?: number[];
  lang?: NoticeLang;
  recipient?: string;
  follow_up_of?: number;
}

/** A suggested recipient of a site's notice. */
export interface ContactSuggestion {
  address: string;
  source: { kind: 'security_txt' | 'page' | 'conventional' | string; url?: string };
  reason: string;
}

export type RemovalState = 'up' | 'changed' | 'removed';
export const REMOVAL_STATES: RemovalState[] = ['up', 'changed', 'removed'];

export interface RemovalEvent {
  at: Millis;
  /** `null`: the first check. */
  from: RemovalState | null;
  to: RemovalState;
  http_status: number | null;
  detail: string;
}

/** The removal watch of one page under notice. */
export interface RemovalWatch {
  page_id: number;
  url: string;
  site: string | null;
  owner: string;
  state: RemovalState;
  since: Millis;
  removed_at: Millis | null;
  flagged_at: Millis | null;
  last_checked_at: Millis;
  last_error: string | null;
  /** Checks in a row that could not reach the host (the second one is a removal). */
  unreachable_checks: number;
  checks: number;
  events: RemovalEvent[];
}

/** A notice that named a watched page. */
export interface WatchNotice {
  id: number;
  reference: string;
  state: NoticeState;
  sent_at: Millis | null;
  recipient: string | null;
  follow_up_of: number | null;
}

export interface RemovalDetail extends RemovalWatch {
  notices: WatchNotice[];
}

/** Removal figures of one site, one holder, or all (`key` empty). */
export interface RemovalFigures {
  key: string;
  notices_delivered: number;
  pages_noticed: number;
  pages_removed: number;
  pages_still_up: number;
  pages_unchecked: number;
  removal_rate: number | null;
  median_hours_to_removal: number | null;
  p90_hours_to_removal: number | null;
  pages_flagged: number;
  matches_licensed: number;
  matches_infringing: number;
}

export interface RemovalStats {
  at: Millis;
  owner: string | null;
  total: RemovalFigures;
  by_site: RemovalFigures[];
  by_holder: RemovalFigures[];
}

/** The schedule state of one entry point of a watched site. */
export interface WatchedEntryPoint {
  url: string;
  last_visit: Millis | null;
  next_visit: Millis;
  /** Current interval between two visits, in seconds (0: not visited yet). */
  interval_secs: number;
  visits: number;
  not_modified: number;
  visits_with_new: number;
  visits_with_copies: number;
  last_outcome: string | null;
}

/** A site re-visited on a schedule for a holder (`/api/v1/watched-sites`). */
export interface WatchedSite {
  id: string;
  /** The holder who added it; a holder's key sees itself here. */
  owner: string;
  /** Every holder it concerns (a holder's key: itself only). */
  holders: string[];
  host: string;
  entry_points: WatchedEntryPoint[];
  chapter_patterns: string[];
  min_delay_secs: number | null;
  created_at: Millis;
  updated_at: Millis;
  updated_by: string;
  version: number;
}

/** The body of `POST /api/v1/watched-sites`. */
export interface NewWatchedSiteBody {
  owner?: string;
  entry_points: string[];
  chapter_patterns?: string[];
  min_delay_secs?: number;
}

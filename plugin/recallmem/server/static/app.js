// The recallmem inspector: plain DOM, no build step, data rendered as text only.
"use strict";

const PAGE = 25;
const USERS_PAGE = 40;
const SECTIONS = ["work_context", "personal_context", "top_of_mind", "recent", "earlier", "background"];
const PARTS = ["dense", "lexical", "recency", "confidence", "time", "newer"];
const EMPTY_DETAIL = "Select a fact to see its sources, evidence and history.";
// Who wrote a fact (the API's source kinds): a person and an agent's model are told apart.
const SOURCES = {
  manual: "manual (a person or a program)", planner: "planner (an agent's remember tool)",
  extraction: "extraction", consolidation: "consolidation", unknown: "unknown",
};
const state = { user: "", agent: "", token: "", offset: 0, usersOffset: 0, selected: null, categories: [] };

const $ = (selector) => document.querySelector(selector);

// Characters that reorder, hide or style text (controls, terminal escapes, bidi
// overrides and isolates, zero-width and tag characters) are shown as visible codes,
// never obeyed; a joiner between two characters stays (scripts and emoji need it).
const UNSEEN = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\u{e0000}-\u{e007f}]/gu;

function inert(text) {
  return String(text).replace(UNSEEN, (c) => `⟨U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")}⟩`);
}

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key === "dataset") Object.assign(node.dataset, value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "textContent" || key === "title") node[key] = inert(value ?? "");
    else if (value !== undefined && value !== null) node[key] = value;
  }
  for (const child of children.flat(Infinity)) {
    if (child !== null && child !== undefined) node.append(child instanceof Node ? child : inert(child));
  }
  return node;
}

function say(text, isError = false) {
  const status = $("#status");
  status.textContent = inert(text);
  status.classList.toggle("error", isError);
}

class ApiError extends Error {
  constructor(problem) {
    super(problem.detail || problem.title || "request failed");
    this.problem = problem;
  }

  // The field errors in words when there are some (the detail wraps them in schema talk).
  get readable() {
    const errors = this.problem.errors || [];
    return errors.length ? errors.map((e) => e.message).join("; ") : this.message;
  }
}

async function call(method, path, body) {
  const headers = { Accept: "application/json" };
  if (state.token) headers.Authorization = `Bearer ${state.token}`;
  // The service takes writes only with this header, body or not: other sites cannot send it.
  if (method !== "GET") headers["Content-Type"] = "application/json";
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  const data = text ? JSON.parse(text) : null;
  if (!response.ok) throw new ApiError(data || { title: response.statusText, status: response.status });
  return { data, response };
}

async function api(method, path, body) {
  return (await call(method, path, body)).data;
}

function userPath(suffix) {
  return `/v1/users/${encodeURIComponent(state.user)}${suffix}`;
}

function query(params) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== "" && value !== null && value !== undefined) search.set(key, value);
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

async function guarded(action) {
  try {
    await action();
  } catch (error) {
    say(error.message, true);
  }
}

function when(iso) {
  return iso ? new Date(iso).toLocaleString() : "—";
}

// -- memory list --------------------------------------------------------------------

async function loadFacts() {
  const params = {
    text: $("#filter-text").value.trim(),
    category: $("#filter-category").value,
    status: $("#filter-status").value,
    agent_id: state.agent,
    limit: PAGE,
    offset: state.offset,
  };
  const page = await api("GET", userPath(`/facts${query(params)}`));
  const list = $("#facts");
  list.replaceChildren(...page.items.map(factItem));
  if (!page.items.length) list.append(el("li", { className: "muted empty" }, "No facts match."));
  $("#prev").disabled = state.offset === 0;
  $("#next").disabled = page.next_offset === null;
  $("#page-info").textContent = page.items.length ? `${state.offset + 1}–${state.offset + page.items.length}` : "";
}

function factItem(fact) {
  return el(
    "li",
    {
      className: `fact status-${fact.status}${fact.id === state.selected ? " selected" : ""}`,
      dataset: { id: fact.id },
      tabIndex: 0,
      onclick: () => guarded(() => showDetail(fact.id)),
      onkeydown: (event) => event.key === "Enter" && guarded(() => showDetail(fact.id)),
    },
    el("span", { className: `badge cat-${fact.category}` }, fact.category),
    fact.pinned ? el("span", { className: "badge pin", title: "pinned: eviction spares it" }, "pinned") : null,
    el("span", { className: "content" }, fact.content),
    el("span", { className: "meta" }, `${fact.status} · ${fact.confidence.toFixed(2)}`),
  );
}

// -- detail -------------------------------------------------------------------------

// Each change of the detail pane takes a number; a fetch that returns after a later
// change (an edit opened meanwhile, another fact clicked) is not shown over it.
let detailTurn = 0;

async function showDetail(id) {
  state.selected = id;
  const turn = ++detailTurn;
  const detail = await api("GET", userPath(`/facts/${encodeURIComponent(id)}`));
  if (turn !== detailTurn) return;
  document.querySelectorAll("#facts .fact").forEach((li) => li.classList.toggle("selected", li.dataset.id === id));
  renderDetail(detail);
}

function sourceLine(e) {
  const model = e.kind === "extraction" || e.kind === "consolidation" ? ` by ${e.extractor}` : "";
  return `${SOURCES[e.kind] || e.kind}${model}${e.prompt_version ? ` (prompt ${e.prompt_version})` : ""}`;
}

function renderDetail({ fact, source, evidence, history, lineage }) {
  const pane = $("#detail");
  const facts = [
    ["id", fact.id], ["category", fact.category], ["confidence", fact.confidence.toFixed(2)],
    ["status", fact.status], ["source", SOURCES[source] || source], ["pinned", fact.pinned ? "yes" : "no"], ["agent", fact.agent_id || "shared"],
    ["thread", fact.thread_id || "—"], ["confirmations", fact.confirmations],
    ["created", when(fact.created_at)], ["updated", when(fact.updated_at)],
    ["last recalled", when(fact.last_accessed_at)], ["valid until", when(fact.valid_until)],
  ];
  if (fact.source_error) facts.push(["avoid", fact.source_error]);
  if (fact.keywords && fact.keywords.length) facts.push(["keywords", fact.keywords.join(", ")]);
  if (fact.questions && fact.questions.length) facts.push(["search keys", fact.questions.join(" | ")]);
  if (fact.keyed_by) facts.push(["keyed by", fact.keyed_by]);
  pane.replaceChildren(
    el("h2", { id: "detail-content" }, fact.content),
    el("div", { className: "actions" },
      el("button", { id: "edit", type: "button", onclick: () => startEdit(fact) }, "Edit"),
      el("button", { id: "pin", type: "button", onclick: () => guarded(() => togglePin(fact)) }, fact.pinned ? "Unpin" : "Pin"),
      fact.status === "faded"
        ? el("button", { id: "restore", type: "button", onclick: () => guarded(() => restore(fact)) }, "Restore")
        : null,
      el("button", { id: "delete", type: "button", className: "danger", onclick: () => guarded(() => confirmDelete(fact)) }, "Delete"),
      el("button", { id: "why", type: "button", title: "where it ranks for the retrieval tab's query", onclick: () => whyNot(fact.id) }, "Why not?"),
    ),
    el("dl", { className: "props" }, facts.map(([k, v]) => [el("dt", {}, k), el("dd", {}, v)])),
    el("h3", {}, "Evidence"),
    evidence.length
      ? el("ul", { className: "evidence" }, evidence.map((e) => el("li", {},
          e.quote ? el("blockquote", {}, e.quote) : el("span", { className: "muted" }, "no quote"),
          el("span", { className: "meta" }, `${sourceLine(e)} · thread ${e.thread_id || "—"} · ${when(e.at)}${e.message_ids.length ? ` · messages ${e.message_ids.join(", ")}` : ""}`),
        )))
      : el("p", { className: "muted" }, "No recorded source."),
    el("h3", {}, "Edit history"),
    history.length
      ? el("ol", { className: "history" }, history.map((r) => el("li", {},
          el("span", {}, r.content), el("span", { className: "meta" }, `${r.category} · ${r.reason || "edited"} · ${when(r.at)}`))))
      : el("p", { className: "muted" }, "Never edited."),
    el("h3", {}, "Supersede lineage"),
    lineage.length > 1
      ? el("ol", { className: "lineage" }, lineage.map((f) => el("li", { className: f.id === fact.id ? "current" : "" },
          el("a", { href: "#", onclick: (event) => { event.preventDefault(); guarded(() => showDetail(f.id)); } }, f.content),
          el("span", { className: "meta" }, ` ${f.status}`))))
      : el("p", { className: "muted" }, "Nothing replaced it and it replaced nothing."),
  );
}

function categorySelect(id, selected) {
  return el("select", { id }, state.categories.map((c) => el("option", { value: c, selected: c === selected }, c)));
}

function startEdit(fact) {
  detailTurn += 1;
  const form = el("form", { id: "edit-form", className: "edit" },
    el("textarea", { id: "edit-content", required: true, maxLength: Number(document.body.dataset.maxContent), rows: 3, value: fact.content }),
    el("div", { className: "row" },
      categorySelect("edit-category", fact.category),
      el("input", { id: "edit-reason", placeholder: "reason (optional)", maxLength: Number(document.body.dataset.maxId) }),
      el("button", { type: "submit", id: "edit-save" }, "Save"),
      el("button", { type: "button", onclick: () => guarded(() => showDetail(fact.id)) }, "Cancel"),
    ),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    guarded(async () => {
      const body = { content: $("#edit-content").value, category: $("#edit-category").value };
      const reason = $("#edit-reason").value.trim();
      if (reason) body.reason = reason;
      await api("PATCH", userPath(`/facts/${encodeURIComponent(fact.id)}`), body);
      say("Saved; the old text is kept in the history.");
      await Promise.all([showDetail(fact.id), loadFacts()]);
    });
  });
  $("#detail-content").replaceWith(form);
  $("#edit-content").focus();
}

async function togglePin(fact) {
  await api("POST", userPath(`/facts/${encodeURIComponent(fact.id)}/${fact.pinned ? "unpin" : "pin"}`));
  say(fact.pinned ? "Unpinned." : "Pinned: eviction will spare it.");
  await Promise.all([showDetail(fact.id), loadFacts()]);
}

async function restore(fact) {
  // Back to active: the edit restarts the faded fact's decay clock.
  await api("PATCH", userPath(`/facts/${encodeURIComponent(fact.id)}`), { status: "active" });
  say("Restored: back in recall.");
  await Promise.all([showDetail(fact.id), loadFacts()]);
}

function confirmDelete(fact) {
  const dialog = $("#confirm");
  $("#confirm-text").textContent = `Delete “${inert(fact.content)}”? It leaves recall but stays for audit unless purged.`;
  $("#confirm-purge").checked = false;
  dialog.returnValue = "";
  dialog.onclose = () => {
    if (dialog.returnValue !== "ok") return;
    guarded(async () => {
      const purge = $("#confirm-purge").checked;
      await api("DELETE", userPath(`/facts/${encodeURIComponent(fact.id)}${query({ purge })}`));
      say(purge ? "Erased for good." : "Deleted (kept for audit; list status 'deleted' to see it).");
      state.selected = null;
      $("#detail").replaceChildren(el("p", { className: "muted" }, EMPTY_DETAIL));
      await loadFacts();
    });
  };
  dialog.showModal();
}

async function addFact(event) {
  event.preventDefault();
  const body = {
    content: $("#add-content").value,
    category: $("#add-category").value,
    confidence: Number($("#add-confidence").value),
    pinned: $("#add-pinned").checked,
  };
  // The browser's local time, sent with its offset (UTC): the API refuses a naive time.
  const until = $("#add-valid-until").value;
  if (until) body.valid_until = new Date(until).toISOString();
  if (state.agent) body.agent_id = state.agent;
  const { data: fact, response } = await call("POST", userPath("/facts"), body);
  $("#add-content").value = "";
  const confirmed = response.headers.get("Recallmem-Outcome") === "confirmed";
  say(confirmed ? `Already known, confirmed again: ${fact.content}` : `Stored: ${fact.content}`);
  state.offset = 0;
  await loadFacts();
  await showDetail(fact.id);
}

// -- retrieval ----------------------------------------------------------------------

function bar(value) {
  return el("td", { className: "num" }, el("span", { className: "bar", style: `--v:${Math.max(0, Math.min(1, value))}` }), value.toFixed(3));
}

// score = Σ weight × part: the terms, for a cell's tooltip.
function sumText(hit) {
  if (!hit.weights) return `score ${hit.score.toFixed(3)}`;
  const terms = PARTS.map((p) => `${hit.weights[p].toFixed(2)}×${hit.parts[p].toFixed(3)}`);
  return `${terms.join(" + ")} = ${hit.score.toFixed(3)}`;
}

function part(hit, name) {
  const cell = bar(hit.parts[name]);
  if (hit.weights) cell.title = `${hit.weights[name].toFixed(2)} × ${hit.parts[name].toFixed(3)} = ${(hit.weights[name] * hit.parts[name]).toFixed(3)}`;
  return cell;
}

function weightsRow(weights) {
  if (!weights) return [];
  return [el("th", { colSpan: 2 }, "weight"), ...PARTS.map((p) => el("th", { className: "num" }, `×${weights[p].toFixed(2)}`)),
    el("th", { colSpan: 2, className: "muted" }, "score = Σ weight × part")];
}

function searchBody(extra = {}) {
  const body = { query: $("#query").value, k: Number($("#k").value) || 8, include_inactive: $("#inactive").checked, ...extra };
  if (state.agent) body.agent_id = state.agent;
  return body;
}

async function search(event) {
  event.preventDefault();
  const result = await api("POST", userPath("/search"), searchBody());
  const shown = result.hits.filter((hit) => hit.score >= result.floor).length;
  $("#search-info").textContent = `${result.hits.length} hit(s) in ${result.took_ms.toFixed(1)} ms; ` +
    `${shown} at or above the recall floor ${result.floor.toFixed(2)}, which an agent is shown`;
  $("#weights").replaceChildren(...weightsRow(result.hits.length ? result.hits[0].weights : null));
  $("#hits tbody").replaceChildren(...result.hits.map((hit, n) => {
    const below = hit.score < result.floor;
    return el("tr", below ? { className: "below-floor", title: "below the recall floor: left out of the memory block and the recall tool" } : {},
      el("td", {}, n + 1), Object.assign(bar(hit.score), { title: sumText(hit) }), ...PARTS.map((p) => part(hit, p)),
      el("td", {}, hit.fact.category),
      el("td", {}, below ? el("span", { className: "badge below" }, "below floor") : null, below ? " " : null,
        el("a", { href: "#", onclick: (e) => { e.preventDefault(); openTab("memory"); guarded(() => showDetail(hit.fact.id)); } }, hit.fact.content),
        " ", el("button", { type: "button", className: "small", onclick: () => whyNot(hit.fact.id) }, "why")),
    );
  }));
}

// -- why not this one -----------------------------------------------------------------

function whyNot(id) {
  openTab("retrieval");
  $("#explain-id").value = id;
  if (!$("#query").value.trim()) {
    $("#explain").replaceChildren(el("p", { className: "muted" }, "Type a query above, then press Explain."));
    $("#query").focus();
    return;
  }
  guarded(explain);
}

async function explain(event) {
  if (event) event.preventDefault();
  if (!$("#query").value.trim()) throw new Error("type the query to explain the fact for first");
  const result = await api("POST", userPath("/search/explain"), searchBody({ fact_id: $("#explain-id").value.trim() }));
  const { hit } = result;
  $("#explain").replaceChildren(
    el("p", { id: "explain-fact" }, el("b", {}, result.fact.content), el("span", { className: "meta" }, ` · ${result.fact.category} · ${result.fact.status}`)),
    el("p", { id: "explain-rank", className: result.in_top_k ? "in" : "out" }, result.reason,
      el("span", { className: "meta" }, ` (of the first ${result.depth} candidates for this query)`)),
    hit ? el("table", { id: "explain-parts", className: "hits" },
      el("thead", {}, el("tr", {}, ["part", "weight", "value", "weight × value"].map((h) => el("th", {}, h)))),
      el("tbody", {}, PARTS.map((p) => el("tr", {}, el("td", {}, p), el("td", { className: "num" }, hit.weights[p].toFixed(2)),
        bar(hit.parts[p]), el("td", { className: "num" }, (hit.weights[p] * hit.parts[p]).toFixed(3)))),
        el("tr", { className: "total" }, el("td", {}, "score"), el("td", {}), el("td", {}), el("td", { className: "num" }, hit.score.toFixed(3))),
        result.kth_score === null ? null
          : el("tr", {}, el("td", {}, `score of hit #${result.k}`), el("td", {}), el("td", {}), el("td", { className: "num" }, result.kth_score.toFixed(3))),
      ),
    ) : null,
  );
}

// -- turns ----------------------------------------------------------------------------

// Why a record was made (its trigger), why each fact came (its role), why one was left out.
const TRIGGERS = {
  block: "memory block at the thread's start", turn: "per-turn note", cue: "recalled for a cue",
  hedge: "recalled for a hedging reply", tool: "recall tool", recent: "recent, not yet extracted",
};
const ROLES = {
  core: "core", relevant: "relevant", correction: "correction", due: "due soon",
  recalled: "recalled", recent: "recent",
};
const REASONS = {
  budget: "no room left", floor: "below the recall floor", visible: "already in the thread",
  limit: "past the count asked for", expired: "expired", scope: "out of the run's scope",
};

function factText(facts, id) {
  const fact = facts[id];
  if (!fact) return [el("span", { className: "erased" }, "(erased)")];
  return [
    el("span", { className: `badge cat-${fact.category}` }, fact.category), " ", fact.content,
    fact.status === "active" ? null : el("span", { className: "meta" }, ` (${fact.status})`),
  ];
}

function score(value, title) {
  return el("span", { className: "num", title: title || "" }, value === null ? "—" : value.toFixed(3));
}

function partsText(parts) {
  return parts ? PARTS.map((p) => `${p} ${parts[p].toFixed(3)}`).join(" · ") : "";
}

function recordLine(record, facts) {
  const bits = [TRIGGERS[record.trigger] || record.trigger, `${record.shown.length} fact(s) shown`];
  if (record.tokens !== null) bits.push(`${record.tokens} tokens`);
  return el("li", { className: `retrieval trigger-${record.trigger}`, dataset: { trigger: record.trigger } },
    el("span", { className: "why" }, bits.join(" · ")),
    record.query ? el("span", { className: "meta" }, ` for “${record.query}”`) : null,
    el("span", { className: "meta" }, ` · ${when(record.at)}${record.agent_id ? ` · agent ${record.agent_id}` : ""}`),
    record.shown.length ? el("ol", { className: "recalled" }, record.shown.map((s) => el("li", {},
      score(s.score, partsText(s.parts)), " ", el("span", { className: "role" }, ROLES[s.role] || s.role), " ",
      ...factText(facts, s.fact_id)))) : null,
    record.dropped.length ? el("ul", { className: "dropped" }, record.dropped.map((d) => el("li", {},
      "left out: ", el("span", { className: "reason" }, REASONS[d.reason] || d.reason), " ", score(d.score), " ",
      ...factText(facts, d.fact_id)))) : null,
  );
}

async function loadTurns(event) {
  if (event) event.preventDefault();
  const { records, facts } = await api("GET", userPath(`/retrievals${query({ thread_id: $("#turns-thread").value.trim(), limit: 200 })}`));
  const turns = [];
  for (const record of records) {
    const key = `${record.thread_id}\u0000${record.turn_id}`;
    const last = turns[turns.length - 1];
    if (last && last.key === key) last.records.push(record);
    else turns.push({ key, thread_id: record.thread_id, turn_id: record.turn_id, at: record.at, records: [record] });
  }
  $("#turns").replaceChildren(...turns.map((turn) => el("li", { className: "turn" },
    el("div", {}, el("b", {}, `thread ${turn.thread_id || "—"}`),
      el("span", { className: "meta" }, ` · turn ${turn.turn_id || "—"} · ${when(turn.at)}`)),
    el("ul", { className: "queue" }, [...turn.records].reverse().map((r) => recordLine(r, facts))),
  )));
  if (!turns.length) $("#turns").append(el("li", { className: "muted" }, "Nothing has reached a model for this user yet."));
}

// -- profile ------------------------------------------------------------------------

async function loadProfile() {
  const profile = await api("GET", userPath(`/profile${query({ agent_id: state.agent })}`));
  const form = $("#profile-form");
  form.replaceChildren(
    ...SECTIONS.map((name) => el("label", {}, el("span", {}, `${name.replace("_", " ")} `,
      el("span", { className: "meta" }, profile[name].updated_at ? `updated ${when(profile[name].updated_at)}` : "")),
      el("textarea", { name, rows: 2, maxLength: Number(document.body.dataset.maxSummary), value: profile[name].summary }))),
    el("button", { type: "submit" }, "Save profile"),
  );
}

async function saveProfile(event) {
  event.preventDefault();
  const body = Object.fromEntries(SECTIONS.map((name) => [name, { summary: event.target.elements[name].value }]));
  await api("PUT", userPath(`/profile${query({ agent_id: state.agent })}`), body);
  say("Profile saved.");
  await loadProfile();
}

// -- extraction ---------------------------------------------------------------------

function card(label, value) {
  return el("div", { className: "card" }, el("span", { className: "meta" }, label), el("strong", {}, value));
}

function queuedMessages(messages) {
  return el("ul", { className: "messages" }, messages.map((m) => el("li", {}, el("b", {}, `${m.role}: `), m.content)));
}

async function loadExtraction() {
  const metrics = await api("GET", userPath("/metrics"));
  const recall = metrics.recall;
  $("#metrics").replaceChildren(
    card("active facts", metrics.facts.active), card("all facts", metrics.facts.total),
    card("recalls served", recall.count), card("hit rate", recall.hit_rate === null ? "—" : `${(recall.hit_rate * 100).toFixed(0)}%`),
    card("recall p50 / p95", recall.p50_ms === null ? "—" : `${recall.p50_ms.toFixed(1)} / ${recall.p95_ms.toFixed(1)} ms`),
    card("extraction calls", metrics.extraction.calls),
    card("extraction tokens (in / out)", `${metrics.extraction.input_tokens} / ${metrics.extraction.output_tokens}`),
  );
  try {
    const queue = await api("GET", userPath("/queue"));
    $("#pending").replaceChildren(...queue.pending.map((p) => el("li", {},
      el("span", { className: "meta" }, `thread ${p.thread_id} · due ${when(p.due_at)} · attempts ${p.attempts}${p.last_error ? ` · last error: ${p.last_error}` : ""}`),
      queuedMessages(p.messages))));
    $("#dead").replaceChildren(...queue.dead_letters.map((d) => el("li", {},
      el("span", { className: "meta" }, `#${d.id} · thread ${d.thread_id} · ${d.attempts} attempts · ${d.reason}`),
      el("button", { type: "button", onclick: () => guarded(async () => {
        await api("POST", userPath(`/queue/dead-letters/${d.id}/retry`));
        say(`Dead letter ${d.id} queued again.`);
        await loadExtraction();
      }) }, "Retry"),
      queuedMessages(d.messages))));
    if (!queue.pending.length) $("#pending").append(el("li", { className: "muted" }, "Nothing waiting."));
    if (!queue.dead_letters.length) $("#dead").append(el("li", { className: "muted" }, "No dead letters."));
  } catch (error) {
    $("#pending").replaceChildren(el("li", { className: "muted" }, error.message));
    $("#dead").replaceChildren();
  }
  const extractions = await api("GET", userPath("/extractions"));
  $("#extractions").replaceChildren(...extractions.map((x) => el("li", {},
    el("span", { className: "meta" },
      `thread ${x.thread_id} · ${x.messages} message(s) · ${x.model || "model"} · ${x.model_calls} call(s), ` +
      `${x.input_tokens} in / ${x.output_tokens} out tokens${x.error ? ` · failed: ${x.error}` : ""}`),
    changeList("added", x.added), changeList("confirmed", x.confirmed),
    changeList("superseded", x.superseded), changeList("dropped", x.dropped),
  )));
  if (!extractions.length) $("#extractions").append(el("li", { className: "muted" }, "No extraction has run in this process yet."));
}

function changeList(label, items) {
  return items.length ? el("div", { className: `change ${label}` }, el("b", {}, `${label}: `), items.join(" · ")) : null;
}

// -- users --------------------------------------------------------------------------

// A link to one user's memory (and agent): the page opens on it.
function userLink(user) {
  const params = new URLSearchParams({ user });
  if (state.agent) params.set("agent", state.agent);
  return `?${params}`;
}

async function loadUsers() {
  const params = { text: $("#users-text").value.trim(), limit: USERS_PAGE, offset: state.usersOffset };
  let page;
  try {
    page = await api("GET", `/v1/users${query(params)}`);
  } catch (error) {
    $("#users-list").replaceChildren(el("li", { className: "muted" }, `Users cannot be listed: ${error.message}`));
    return;
  }
  $("#users-list").replaceChildren(...page.items.map((user) => el("li", {},
    el("a", { href: userLink(user), className: user === state.user ? "current" : "",
      onclick: (event) => { event.preventDefault(); $("#user").value = user; guarded(connect); } }, user))));
  if (!page.items.length) $("#users-list").append(el("li", { className: "muted" }, params.text ? "No user matches." : "No user has facts stored yet."));
  $("#users-info").textContent = page.total ? `${page.offset + 1}–${page.offset + page.items.length} of ${page.total}` : "";
  $("#users-prev").disabled = state.usersOffset === 0;
  $("#users-next").disabled = page.next_offset === null;
}

// -- wiring -------------------------------------------------------------------------

const loaders = { memory: loadFacts, retrieval: async () => {}, turns: loadTurns, profile: loadProfile, extraction: loadExtraction };

function openTab(name) {
  document.querySelectorAll(".tabs [role=tab]").forEach((tab) => tab.setAttribute("aria-selected", String(tab.dataset.tab === name)));
  document.querySelectorAll(".tab").forEach((section) => { section.hidden = section.id !== `tab-${name}`; });
  localStorage.setItem("recallmem.tab", name);
  if (state.user) guarded(loaders[name]);
}

async function loadCategories() {
  const schema = await api("GET", "/openapi.json");
  state.categories = schema.components.schemas.Category.enum;
  $("#filter-category").append(...state.categories.map((c) => el("option", { value: c }, c)));
  $("#add-category").replaceChildren(...state.categories.map((c) => el("option", { value: c, selected: c === "preference" }, c)));
}

// Nothing of the previous user stays on screen, and nothing can act on them.
function closeUser() {
  state.user = "";
  state.selected = null;
  $("#facts").replaceChildren();
  $("#page-info").textContent = "";
  $("#detail").replaceChildren(el("p", { className: "muted" }, EMPTY_DETAIL));
  $("#hits tbody").replaceChildren();
  $("#weights").replaceChildren();
  $("#search-info").textContent = "";
  $("#explain").replaceChildren();
  $("#turns").replaceChildren();
  $("#profile-form").replaceChildren();
  for (const id of ["#metrics", "#pending", "#dead", "#extractions"]) $(id).replaceChildren();
  setOpen(false);
}

function setOpen(open) {
  document.querySelectorAll(".user-action").forEach((button) => { button.disabled = !open; });
  if (!open) { $("#prev").disabled = true; $("#next").disabled = true; }
}

async function connect(event) {
  if (event) event.preventDefault();
  closeUser();
  const user = $("#user").value;  // as typed: trimming could turn one user id into another
  state.agent = $("#agent").value.trim();
  state.token = $("#token").value;
  state.offset = 0;
  localStorage.setItem("recallmem.user", user);
  localStorage.setItem("recallmem.agent", state.agent);
  sessionStorage.setItem("recallmem.token", state.token);
  if (!user) return;
  state.user = user;
  try {
    await api("GET", userPath(`/facts${query({ limit: 1 })}`));  // the API's word on the user id and token
  } catch (error) {
    closeUser();
    say(`Could not open “${user}”: ${error instanceof ApiError ? error.readable : error.message}`, true);
    return;
  }
  setOpen(true);
  history.replaceState(null, "", userLink(user));
  say(`Memory of ${state.user}${state.agent ? ` (agent ${state.agent})` : ""}`);
  guarded(loadUsers);
  openTab(localStorage.getItem("recallmem.tab") || "memory");
}

document.addEventListener("DOMContentLoaded", () => {
  const linked = new URLSearchParams(location.search);  // ?user=ada&agent=writer opens that memory
  $("#user").value = linked.get("user") ?? localStorage.getItem("recallmem.user") ?? "";
  $("#agent").value = linked.get("agent") ?? (linked.has("user") ? "" : localStorage.getItem("recallmem.agent") ?? "");
  $("#token").value = sessionStorage.getItem("recallmem.token") || "";
  $("#connect").addEventListener("submit", connect);
  $("#filters").addEventListener("submit", (e) => { e.preventDefault(); state.offset = 0; guarded(loadFacts); });
  $("#prev").addEventListener("click", () => { state.offset = Math.max(0, state.offset - PAGE); guarded(loadFacts); });
  $("#next").addEventListener("click", () => { state.offset += PAGE; guarded(loadFacts); });
  $("#add-form").addEventListener("submit", (e) => guarded(() => addFact(e)));
  $("#search-form").addEventListener("submit", (e) => guarded(() => search(e)));
  $("#explain-form").addEventListener("submit", (e) => guarded(() => explain(e)));
  $("#profile-form").addEventListener("submit", (e) => guarded(() => saveProfile(e)));
  $("#turns-form").addEventListener("submit", (e) => guarded(() => loadTurns(e)));
  document.querySelectorAll(".tabs [role=tab]").forEach((tab) => tab.addEventListener("click", () => openTab(tab.dataset.tab)));
  $("#users-form").addEventListener("submit", (e) => { e.preventDefault(); state.usersOffset = 0; guarded(loadUsers); });
  $("#users-prev").addEventListener("click", () => { state.usersOffset = Math.max(0, state.usersOffset - USERS_PAGE); guarded(loadUsers); });
  $("#users-next").addEventListener("click", () => { state.usersOffset += USERS_PAGE; guarded(loadUsers); });
  guarded(async () => {
    await loadCategories();
    if ($("#user").value) await connect();
    else {
      say("Pick a user below, or enter a user id (or 'me' with a user's token) and press Open.");
      await loadUsers();
    }
  });
});

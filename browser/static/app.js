/* The memory browser: every read and review action goes through kgmem's GraphQL API with
 * the key the person entered (kept for this tab in sessionStorage, sent as a Bearer header).
 * Text from the store is put in the page as text (textContent), never as HTML; a page's
 * Markdown is rendered by markdown-it with raw HTML and images off. */
"use strict";

(function () {
  const KEY = "kgmem.key";
  const $ = (id) => document.getElementById(id);
  const state = { me: null, graph: null, labels: new Map(), names: new Map(), selected: null };
  const md = window.markdownit({ html: false, linkify: false, typographer: false }).disable("image");
  const defaultLink = md.renderer.rules.link_open || ((tokens, i, options, env, self) => self.renderToken(tokens, i, options));
  md.renderer.rules.link_open = (tokens, i, options, env, self) => {
    tokens[i].attrSet("rel", "noopener noreferrer nofollow");
    tokens[i].attrSet("target", "_blank");
    return defaultLink(tokens, i, options, env, self);
  };

  // -- helpers ---------------------------------------------------------------------------

  const FRONT_MATTER = /^---\n[\s\S]*?\n---\n/;
  const WIKILINK = /\[\[([^\]|#]+)(?:#[^\]|]*)?(?:\|([^\]]+))?\]\]/g;

  /* A page's Markdown as the browser shows it: the front matter (kgmem's bookkeeping) left
   * out, and vault links ([[Memory/entities/ada|Ada]]) made into links the page follows. */
  function renderMarkdown(text) {
    const body = text.replace(FRONT_MATTER, "").replace(WIKILINK, (all, target, label) =>
      "[" + (label || target.split("/").pop()).replace(/[[\]]/g, "") + "](#page:" + encodeURIComponent(target.trim()) + ")");
    const box = el("div", { class: "page-md" });
    box.innerHTML = md.render(body); // markdown-it escapes raw HTML (html: false); images are off
    for (const a of box.querySelectorAll("a[href^='#page:']")) {
      a.removeAttribute("target");
      a.addEventListener("click", (event) => {
        event.preventDefault();
        followPage(decodeURIComponent(a.getAttribute("href").slice(6)));
      });
    }
    return box;
  }

  async function followPage(target) {
    const path = target.endsWith(".md") ? target : target + ".md";
    try {
      const data = await gql("query P($p: String!) { page(path: $p) { kind title path of markdown } }", { p: path });
      const page = data.page;
      if (page && page.of && state.names.has(page.of)) { choose(page.of, true); }
      else if (page) { showNote(page); }
    } catch (error) { problem($("detail"), error); }
  }

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) { continue; }
      if (name === "class") { node.className = value; }
      else if (name.startsWith("on")) { node.addEventListener(name.slice(2), value); }
      else { node.setAttribute(name, value === true ? "" : value); }
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) { continue; }
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function when(iso) {
    if (!iso) { return ""; }
    const d = new Date(iso);
    return isNaN(d) ? iso : d.toISOString().replace("T", " ").slice(0, 16) + " UTC";
  }

  function local(iri) {
    const s = String(iri || "");
    const cut = Math.max(s.lastIndexOf("#"), s.lastIndexOf("/"), s.lastIndexOf(":"));
    return cut >= 0 ? s.slice(cut + 1) : s;
  }

  function nameOf(id) { return state.names.get(id) || local(id); }
  function predicateLabel(iri) { return state.labels.get(iri) || local(iri); }

  class ApiError extends Error {
    constructor(message, status) { super(message); this.status = status; }
  }

  async function gql(query, variables) {
    const key = sessionStorage.getItem(KEY);
    const response = await fetch("/graphql", {
      method: "POST",
      headers: { "Content-Type": "application/json", "Authorization": "Bearer " + key },
      body: JSON.stringify({ query, variables: variables || {} }),
    });
    let body = null;
    try { body = await response.json(); } catch (e) { body = null; }
    if (response.status === 401) {
      throw new ApiError((body && body.error && body.error.message) || "the key was not accepted", 401);
    }
    if (!response.ok && !(body && body.data)) {
      const message = body && (body.error ? body.error.message : body.errors && body.errors[0].message);
      throw new ApiError(message || "the server answered " + response.status, response.status);
    }
    if (body.errors && body.errors.length) { throw new ApiError(body.errors[0].message, 200); }
    return body.data;
  }

  function problem(where, error) {
    where.textContent = "";
    where.append(el("span", { class: "error" }, error.message || String(error)));
    if (error.status === 401) { signOut("Your key is no longer accepted: sign in again."); }
  }

  // -- sign in -----------------------------------------------------------------------------

  async function signIn(key) {
    sessionStorage.setItem(KEY, key);
    const graph = fetchGraph(); // asked at once: the largest answer, wanted first
    graph.catch(() => null); // a refused key is reported once, below
    try {
      const data = await gql("{ me { id role admin } }");
      state.me = data.me;
    } catch (error) {
      sessionStorage.removeItem(KEY);
      $("sign-in-error").textContent = error.status === 401
        ? "That key was not accepted." : "Could not sign in: " + error.message;
      return;
    }
    $("sign-in").hidden = true;
    $("views").hidden = false;
    $("main").hidden = false;
    $("sign-out").hidden = false;
    $("who").hidden = false;
    $("who").textContent = "signed in as " + state.me.id + (state.me.admin ? " (admin)" : "");
    $("reset-uid").textContent = state.me.id;
    show("explore");
    loadGraph(graph);
    loadInboxCount();
  }

  function signOut(message) {
    sessionStorage.removeItem(KEY);
    state.me = null;
    $("sign-in").hidden = false;
    for (const id of ["views", "main", "sign-out", "who"]) { $(id).hidden = true; }
    $("sign-in-error").textContent = message || "";
    $("key").value = "";
    $("key").focus();
  }

  // -- views -------------------------------------------------------------------------------

  const loaders = { inbox: loadInbox, decisions: loadDecisions, consolidation: loadConsolidation };

  function show(view) {
    for (const button of document.querySelectorAll("#views button")) {
      if (button.dataset.view === view) { button.setAttribute("aria-current", "page"); }
      else { button.removeAttribute("aria-current"); }
    }
    for (const section of document.querySelectorAll(".view")) {
      section.hidden = section.id !== "view-" + view;
    }
    if (loaders[view]) { loaders[view](); }
    const cy = window.KgGraph.instance();
    if (view === "explore" && cy) { cy.resize(); }
  }

  // -- graph, search, browse ---------------------------------------------------------------

  const GRAPH = `query Graph($first: Int!) { graph(first: $first) {
    total truncated
    nodes { id name branch branchLabel memories hasPage }
    predicates { iri label }
    edges { source target predicate inferred }
    links { source target shared } } }`;

  function fetchGraph() { return gql(GRAPH, { first: 5000 }); }

  async function loadGraph(asked) {
    const status = $("graph-status");
    status.textContent = "Loading the graph…";
    const started = performance.now();
    let data;
    try { data = await (asked || fetchGraph()); } catch (error) { problem(status, error); return; }
    window.kgmemQueryMs = performance.now() - started;
    const view = data.graph;
    state.graph = view;
    state.names = new Map(view.nodes.map((n) => [n.id, n.name]));
    state.labels = new Map(view.predicates.map((p) => [p.iri, p.label]));
    let legend = [];
    try {
      legend = window.KgGraph.draw($("graph"), view, (id) => choose(id, true));
    } catch (error) { problem(status, error); return; }
    requestAnimationFrame(() => { // drawn: what benchmarks/browser.py times and tests wait for
      window.kgmemReadyAt = performance.now();
      document.body.dataset.graph = "ready";
    });
    status.textContent = view.nodes.length + " entities, " + view.edges.length + " facts, "
      + view.links.length + " page links" + (view.truncated ? " (the " + view.nodes.length + " most written about of " + view.total + ")" : "");
    drawLegend(legend);
    browse();
  }

  function drawLegend(legend) {
    const box = $("legend");
    box.textContent = "";
    box.append(el("h2", {}, "Ontology branches"),
      el("ul", { id: "branches" }, legend.map((b) => el("li", { "data-branch": b.branch },
        el("span", { class: "swatch", style: null, "data-colour": b.colour }), b.label + " (" + b.count + ")"))),
      el("h2", {}, "Links"),
      el("ul", {},
        el("li", {}, el("span", { class: "line" }), "asserted fact"),
        el("li", {}, el("span", { class: "line inferred" }), "inferred fact"),
        el("li", {}, el("span", { class: "line link" }), "pages sharing memories")));
    for (const swatch of box.querySelectorAll(".swatch")) {
      swatch.style.backgroundColor = swatch.dataset.colour; // CSSOM, allowed by the page's policy
    }
  }

  function browse() {
    const nodes = (state.graph ? state.graph.nodes : []).filter((n) => n.hasPage)
      .sort((a, b) => a.name.localeCompare(b.name));
    $("finder-title").textContent = nodes.length + " pages";
    const list = $("results");
    list.textContent = "";
    for (const n of nodes) {
      list.append(el("li", {}, el("button", { type: "button", "data-entity": n.id, onclick: () => choose(n.id, true) },
        el("span", { class: "kind" }, "page"), n.name)));
    }
  }

  const SEARCH = `query Search($q: String!) { search(query: $q, k: 20) {
    __typename
    ... on SearchResults { hits { id shortId kind title excerpt score path memory { id entities { id name } } } }
    ... on InputError { message field } } }`;

  async function search(text) {
    if (!text.trim()) { browse(); return; }
    const list = $("results");
    $("finder-title").textContent = "Searching…";
    let data;
    try { data = await gql(SEARCH, { q: text }); } catch (error) { problem($("finder-title"), error); return; }
    const result = data.search;
    if (result.__typename === "InputError") { $("finder-title").textContent = result.message; return; }
    list.textContent = "";
    $("finder-title").textContent = result.hits.length + " results for “" + text + "”";
    for (const hit of result.hits) {
      list.append(el("li", {}, el("button", { type: "button", "data-hit": hit.id, onclick: () => openHit(hit) },
        el("span", { class: "kind" }, hit.kind), hit.title, el("span", { class: "excerpt" }, hit.excerpt))));
    }
  }

  async function openHit(hit) {
    for (const b of document.querySelectorAll("#results button")) {
      b.setAttribute("aria-pressed", String(b.dataset.hit === hit.id));
    }
    if (hit.memory && hit.memory.entities.length) {
      // the entity the title names first ("Ada lives in Porto": Ada)
      const title = hit.title.toLowerCase();
      const at = (e) => { const i = title.indexOf((e.name || "").toLowerCase()); return i < 0 ? Infinity : i; };
      const first = [...hit.memory.entities].sort((a, b) => at(a) - at(b))[0];
      choose(first.id, true);
      return;
    }
    if (hit.path) {
      try {
        const data = await gql("query P($p: String!) { page(path: $p) { kind title path of markdown } }", { p: hit.path });
        const page = data.page;
        if (page && page.of && state.names.has(page.of)) { choose(page.of, true); return; }
        if (page) { showNote(page); return; }
      } catch (error) { problem($("detail"), error); return; }
    }
    $("detail").textContent = "";
    $("detail").append(el("h2", {}, hit.title), el("p", {}, hit.excerpt));
  }

  function showNote(page) {
    const detail = $("detail");
    detail.textContent = "";
    detail.append(el("h2", {}, page.title), el("p", { class: "muted" }, page.kind + " · " + page.path),
      renderMarkdown(page.markdown || ""));
  }

  const ENTITY = `query Entity($id: ID!) { entity(id: $id) {
    id shortId name aliases
    types { iri label ancestors { iri label } }
    attributes { property value datatype }
    relations { predicate direction inferred memory subjectId objectId other { id name } }
    page { path title revision markdown }
    memories { id shortId kind status title excerpt pinned strength confidence
      occurredAt recordedAt validFrom validUntil supersedes supersededBy contradicts
      history { action at reason }
      evidence { id sourceType support authority quote agentReported
        source { id type text chat turn role speaker toolName notePath taskId link timestamp } } } } }`;

  async function choose(id, focusGraph) {
    state.selected = id;
    if (focusGraph) { window.KgGraph.focus(id); }
    const detail = $("detail");
    detail.setAttribute("aria-busy", "true");
    let data;
    try { data = await gql(ENTITY, { id }); } catch (error) { problem(detail, error); return; }
    finally { detail.removeAttribute("aria-busy"); }
    if (state.selected !== id) { return; }
    renderEntity(data.entity);
  }

  function renderEntity(entity) {
    const detail = $("detail");
    detail.textContent = "";
    if (!entity) { detail.append(el("p", { class: "muted" }, "Not found.")); return; }
    detail.dataset.entity = entity.id;
    detail.append(el("h2", {}, entity.name || entity.shortId));
    if (entity.aliases.length) { detail.append(el("p", { class: "muted" }, "also: " + entity.aliases.join(", "))); }

    if (entity.page && entity.page.markdown) {
      const body = renderMarkdown(entity.page.markdown);
      body.id = "page-markdown";
      detail.append(el("h3", {}, "Page"), el("p", { class: "muted" }, entity.page.path
        + (entity.page.revision ? " · revision " + entity.page.revision : "")), body);
    }

    detail.append(el("h3", {}, "Types"), el("ul", { class: "types" }, entity.types.map((t) =>
      el("li", {}, t.label, " ", el("span", {}, t.ancestors.length ? "⊑ " + t.ancestors.map((a) => a.label).join(", ") : "")))));

    if (entity.attributes.length) {
      detail.append(el("h3", {}, "Attributes"), el("ul", {}, entity.attributes.map((a) =>
        el("li", {}, predicateLabel(a.property) + ": " + a.value))));
    }

    const rel = (r) => {
      const other = r.other ? r.other.name || local(r.other.id) : local(r.direction === "OUT" ? r.objectId : r.subjectId);
      const otherId = r.direction === "OUT" ? r.objectId : r.subjectId;
      return el("li", { class: r.inferred ? "inferred" : "asserted" },
        el("button", { type: "button", class: "linklike", onclick: () => choose(otherId, true) }, other),
        " — " + predicateLabel(r.predicate) + (r.inferred ? " (inferred)" : ""));
    };
    const out = entity.relations.filter((r) => r.direction === "OUT");
    const inc = entity.relations.filter((r) => r.direction === "IN");
    detail.append(el("h3", {}, "Outgoing relations"), out.length ? el("ul", { id: "relations-out" }, out.map(rel)) : el("p", { class: "muted" }, "none"));
    detail.append(el("h3", {}, "Incoming relations"), inc.length ? el("ul", { id: "relations-in" }, inc.map(rel)) : el("p", { class: "muted" }, "none"));

    detail.append(el("h3", {}, "Memories (" + entity.memories.length + ")"),
      el("ul", { class: "memories", id: "memories" }, entity.memories.map(memoryCard)));
  }

  function memoryCard(m) {
    const history = m.history[0];
    const times = [
      m.occurredAt && "happened " + when(m.occurredAt),
      m.recordedAt && "recorded " + when(m.recordedAt),
      m.validFrom && "valid from " + when(m.validFrom),
      m.validUntil && "until " + when(m.validUntil),
    ].filter(Boolean).join(" · ");
    const replaced = [];
    if (m.supersedes.length) { replaced.push(el("p", { class: "muted" }, "supersedes " + m.supersedes.map(local).join(", "))); }
    if (m.supersededBy.length) { replaced.push(el("p", { class: "muted" }, "superseded by " + m.supersededBy.map(local).join(", "))); }
    if (m.contradicts.length) { replaced.push(el("p", { class: "error" }, "contradicts " + m.contradicts.map(local).join(", "))); }
    return el("li", { class: "memory", "data-memory": m.id },
      el("header", {}, el("strong", {}, m.title)),
      el("p", {},
        el("span", { class: "badge" }, m.kind.toLowerCase()),
        el("span", { class: "badge " + m.status.toLowerCase() }, m.status.toLowerCase()),
        history ? el("span", { class: "badge" }, "decision: " + history.action) : null,
        m.pinned ? el("span", { class: "badge" }, "pinned") : null,
        el("span", { class: "muted" }, " " + m.shortId)),
      times ? el("p", { class: "muted" }, times) : null,
      replaced,
      m.evidence.length ? el("ul", { class: "evidence" }, m.evidence.map(evidenceItem)) : el("p", { class: "muted" }, "no evidence"));
  }

  function evidenceItem(e) {
    const link = e.source ? e.source.link : e.sourceType;
    return el("li", { "data-evidence": e.id },
      e.quote ? el("blockquote", { class: "quote" }, e.quote) : el("p", { class: "muted" }, "(no quote)"),
      el("span", { class: "muted" }, e.support + " · " + e.authority + (e.agentReported ? " · agent-reported" : "") + " · "),
      e.source
        ? el("button", { type: "button", class: "linklike source-link", onclick: () => showSource(e) }, link)
        : el("span", { class: "muted" }, "source not stored"));
  }

  function showSource(e) {
    const s = e.source;
    const meta = $("source-meta");
    meta.textContent = "";
    const rows = [["link", s.link], ["type", s.type], ["when", when(s.timestamp)], ["chat", s.chat],
      ["turn", s.turn], ["role", s.role], ["speaker", s.speaker], ["tool", s.toolName],
      ["note", s.notePath], ["task", s.taskId]];
    for (const [k, v] of rows) {
      if (v !== null && v !== undefined && v !== "") { meta.append(el("dt", {}, k), el("dd", {}, String(v))); }
    }
    const text = $("source-text");
    text.textContent = "";
    const at = e.quote ? s.text.indexOf(e.quote) : -1;
    if (at >= 0) {
      text.append(s.text.slice(0, at), el("mark", {}, e.quote), s.text.slice(at + e.quote.length));
    } else {
      text.append(s.text);
    }
    $("source-dialog").showModal();
  }

  // -- review inbox and decisions ----------------------------------------------------------

  const INBOX = `{ reviewInbox(first: 200) { id shortId kind status title excerpt recordedAt
    entities { id name } evidence { quote source { link } } } }`;

  async function loadInboxCount() {
    try {
      const data = await gql("{ reviewInbox(first: 200) { id } }");
      $("inbox-count").textContent = data.reviewInbox.length ? "(" + data.reviewInbox.length + ")" : "";
    } catch (error) { /* the inbox view says why when opened */ }
  }

  let inboxLoads = 0; // only the latest load renders (an older answer is stale)

  async function loadInbox() {
    const list = $("inbox");
    const status = $("inbox-status");
    const mine = ++inboxLoads;
    list.setAttribute("aria-busy", "true");
    let data;
    try { data = await gql(INBOX); } catch (error) {
      if (mine === inboxLoads) { problem(status, error); list.setAttribute("aria-busy", "false"); }
      return;
    }
    if (mine !== inboxLoads) return;
    // a button focused in the list keeps the focus across the new rendering
    const focused = document.activeElement && list.contains(document.activeElement) ? document.activeElement : null;
    const keep = focused ? [focused.closest("li") && focused.closest("li").dataset.memory, focused.className] : null;
    list.textContent = "";
    status.textContent = data.reviewInbox.length ? data.reviewInbox.length + " waiting" : "Nothing waits for review.";
    $("inbox-count").textContent = data.reviewInbox.length ? "(" + data.reviewInbox.length + ")" : "";
    for (const m of data.reviewInbox) {
      list.append(el("li", { "data-memory": m.id },
        el("strong", {}, m.title),
        el("p", { class: "muted" }, m.kind.toLowerCase() + " · " + m.shortId + " · " + when(m.recordedAt)
          + (m.entities.length ? " · about " + m.entities.map((x) => x.name).join(", ") : "")),
        m.evidence.filter((e) => e.quote).map((e) => el("blockquote", {}, e.quote)),
        el("div", { class: "actions" },
          el("button", { type: "button", class: "approve", onclick: () => review(m, "approveMemory") }, "Approve"),
          el("button", { type: "button", class: "reject", onclick: () => review(m, "rejectMemory") }, "Reject"))));
    }
    if (keep) {
      const again = [...list.querySelectorAll("li")].find((li) => li.dataset.memory === keep[0]);
      const button = again && again.querySelector("button." + keep[1]);
      if (button) button.focus();
    }
    list.setAttribute("aria-busy", "false");
  }

  const MANAGED = `__typename ... on Managed { action decision status }
    ... on InputError { message } ... on NotFound { message } ... on Conflict { message }`;

  async function review(m, mutation) {
    const status = $("inbox-status");
    let said;
    try {
      const data = await gql(`mutation R($id: ID!) { result: ${mutation}(id: $id) { ${MANAGED} } }`, { id: m.id });
      const r = data.result;
      said = r.__typename === "Managed"
        ? (mutation === "approveMemory" ? "Approved" : "Rejected") + " “" + m.title + "” (now " + r.status + ")."
        : r.message;
    } catch (error) { problem(status, error); return; }
    await loadInbox();
    status.textContent = said; // once the list shows the change
  }

  const DECISIONS = `{ decisions(first: 200) { id shortId action target reason actor at revertedBy draft { title kind } memory { title status } } }`;

  async function loadDecisions() {
    const body = document.querySelector("#decisions tbody");
    const status = $("decisions-status");
    let data;
    try { data = await gql(DECISIONS); } catch (error) { problem(status, error); return; }
    body.textContent = "";
    if (!data.decisions.length) { status.textContent = "No decisions yet."; }
    for (const d of data.decisions) {
      const what = d.draft ? d.draft.title : d.memory ? d.memory.title + " (" + d.memory.status.toLowerCase() + ")"
        : d.target ? local(d.target) : "";
      const action = d.target && !d.revertedBy && d.action !== "revert"
        ? el("button", { type: "button", class: "revert", onclick: () => revert(d) }, "Revert")
        : el("span", { class: "muted" }, d.revertedBy ? "reverted" : "");
      body.append(el("tr", { "data-decision": d.id },
        el("td", {}, when(d.at)), el("td", {}, d.action), el("td", {}, what),
        el("td", {}, d.reason), el("td", {}, d.actor), el("td", {}, action)));
    }
  }

  async function revert(d) {
    const status = $("decisions-status");
    let said;
    try {
      const data = await gql(`mutation V($id: ID!, $d: ID!) { result: manageMemory(id: $id, action: REVERT, decision: $d) { ${MANAGED} } }`,
        { id: d.target, d: d.id });
      const r = data.result;
      const what = d.memory ? "“" + d.memory.title + "”" : local(d.target);
      said = r.__typename === "Managed" ? "Reverted " + d.action + " of " + what + " (now " + (r.status || "gone") + ")." : r.message;
    } catch (error) { problem(status, error); return; }
    await loadDecisions();
    loadInboxCount();
    status.textContent = said; // once the feed shows the change
  }

  // -- consolidation and settings ----------------------------------------------------------

  const CONSOLIDATION = `{ consolidation(history: 20) { model waitingSources waitingDrafts
    passes { id state stage attempts recoveries startedAt finishedAt drafts sources error errorStage } } }`;

  async function loadConsolidation() {
    const summary = $("consolidation-summary");
    let data;
    try { data = await gql(CONSOLIDATION); } catch (error) { problem(summary, error); return; }
    const c = data.consolidation;
    const active = c.passes.filter((p) => ["queued", "running", "parked", "waiting", "dead"].includes(p.state));
    summary.textContent = "";
    summary.append(el("p", {}, "Model: " + (c.model || "none configured (no model stages run)")
      + " · waiting: " + c.waitingSources + " sources, " + c.waitingDrafts + " drafts"),
      el("p", { id: "active-pass" }, active.length ? "Active: " + active.map((p) => local(p.id) + " (" + p.state + (p.stage ? ", " + p.stage : "") + ")").join("; ") : "No pass is active."));
    const body = document.querySelector("#passes tbody");
    body.textContent = "";
    for (const p of c.passes) {
      body.append(el("tr", {}, el("td", {}, local(p.id)), el("td", {}, p.state), el("td", {}, p.stage || ""),
        el("td", {}, p.attempts + (p.recoveries ? " (+" + p.recoveries + " resumed)" : "")),
        el("td", {}, when(p.startedAt)), el("td", {}, when(p.finishedAt)),
        el("td", {}, p.sources + " / " + p.drafts), el("td", {}, p.error ? (p.errorStage ? p.errorStage + ": " : "") + p.error : "")));
    }
  }

  async function reset(event) {
    event.preventDefault();
    const status = $("reset-status");
    const uid = state.me.id;
    if ($("reset-confirm").value !== uid) { status.textContent = "Type " + uid + " exactly to confirm."; return; }
    if (!state.me.admin) {
      status.textContent = "Only an admin can reset a user: ask one, or run `kgmem` as the store's owner.";
      return;
    }
    $("reset-button").disabled = true;
    status.textContent = "Reset running…";
    try {
      const headers = { "Content-Type": "application/json", "Authorization": "Bearer " + sessionStorage.getItem(KEY) };
      const response = await fetch("/api/admin/users/" + encodeURIComponent(uid) + "/reset", {
        method: "POST", headers, body: JSON.stringify({ confirm: uid }),
      });
      let body = await response.json();
      if (!response.ok) {
        status.textContent = "Reset refused: " + (body.error ? body.error.message : response.status);
      } else {
        let job = body.job;
        while (job.status === "running") {  // the reset runs as a job: follow its steps
          status.textContent = "Reset running (" + job.steps_done + "/" + job.steps_total + "): " + job.step + "…";
          await new Promise((done) => setTimeout(done, 250));
          job = await (await fetch("/api/admin/jobs/" + job.id, { headers })).json();
        }
        status.textContent = job.status === "done"
          ? "Reset done: " + job.report.graphs.length + " graphs and " + job.report.triples + " triples dropped; "
            + job.report.sources_waiting + " sources wait for consolidation again."
          : "Reset failed: " + job.error;
      }
    } catch (error) { status.textContent = "Reset failed: " + error.message; }
    $("reset-confirm").value = "";
    loadGraph();
    loadInboxCount();
  }

  // -- wiring ------------------------------------------------------------------------------

  document.addEventListener("DOMContentLoaded", () => {
    $("sign-in-form").addEventListener("submit", (event) => {
      event.preventDefault();
      const key = $("key").value.trim();
      if (key) { signIn(key); }
    });
    $("sign-out").addEventListener("click", () => signOut(""));
    for (const button of document.querySelectorAll("#views button")) {
      button.addEventListener("click", () => show(button.dataset.view));
    }
    $("search-form").addEventListener("submit", (event) => { event.preventDefault(); search($("search").value); });
    $("fit").addEventListener("click", () => window.KgGraph.fit());
    $("reset-confirm").addEventListener("input", () => {
      $("reset-button").disabled = !state.me || $("reset-confirm").value !== state.me.id;
    });
    $("reset-form").addEventListener("submit", reset);
    const key = sessionStorage.getItem(KEY);
    if (key) { signIn(key); } else { $("key").focus(); }
  });
})();

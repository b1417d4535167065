// tasktool dashboard: table filters and sorting, the edit form, live reload, keyboard keys.
// Plain script, no framework; every page works without it (minus these conveniences).
"use strict";

(function () {
  const body = document.body;
  const live = body.dataset.mode === "live" || body.dataset.mode === "readonly";

  function typing(target) {
    return target instanceof HTMLElement &&
      (target.isContentEditable || /^(INPUT|SELECT|TEXTAREA)$/.test(target.tagName));
  }

  // ---- task table: search, drop-down filters, sortable columns, state kept in the URL ----
  const table = document.querySelector("[data-task-table]");
  const filters = document.querySelector("[data-table-filters]");
  let selected = -1;
  // Ids whose title or body hold every word of the search (the live API's search, as the
  // CLI's `search` finds them); the row's own text (id, title, owner, tags) matches too.
  let found = new Set();
  let asked = "";
  let typingPause;

  function searchSoon() { // one search per pause in typing, not one per key
    clearTimeout(typingPause);
    typingPause = setTimeout(searchBodies, 150);
  }

  function visibleRows() {
    return table ? Array.from(table.tBodies[0].rows).filter((row) => !row.hidden && row.dataset.id) : [];
  }

  function select(index) {
    const rows = visibleRows();
    rows.forEach((row) => row.classList.remove("selected"));
    if (!rows.length || index < 0) { selected = -1; return; }
    selected = Math.max(0, Math.min(index, rows.length - 1));
    rows[selected].classList.add("selected");
    rows[selected].scrollIntoView({ block: "nearest" });
  }

  function applyFilters() {
    if (!table || !filters) return;
    const query = filters.querySelector("[data-search]").value.trim().toLowerCase();
    const chosen = Array.from(filters.querySelectorAll("[data-filter]"))
      .filter((el) => el.value)
      .map((el) => [el.dataset.filter, el.value]);
    let shown = 0;
    let total = 0;
    for (const row of table.tBodies[0].rows) {
      if (!row.dataset.id) continue;
      total += 1;
      const words = query ? query.split(/\s+/) : [];
      const matches = (words.every((word) => row.dataset.search.includes(word)) || found.has(row.dataset.id)) &&
        chosen.every(([field, value]) =>
          field === "tags" ? row.dataset.tags.split(" ").includes(value) : row.dataset[field] === value);
      row.hidden = !matches;
      if (matches) shown += 1;
    }
    const count = document.querySelector("[data-count]");
    if (count) count.textContent = shown === total ? `${total} tasks` : `${shown} of ${total} tasks`;
    const params = new URLSearchParams();
    if (query) params.set("q", query);
    for (const [field, value] of chosen) params.set(field, value);
    const sort = table.dataset.sortField;
    if (sort) params.set("sort", (table.dataset.sortDir === "descending" ? "-" : "") + sort);
    const search = params.toString();
    history.replaceState(null, "", search ? `?${search}` : location.pathname);
    select(-1);
  }

  async function searchBodies() {
    const api = filters && filters.dataset.searchApi;
    const query = api ? filters.querySelector("[data-search]").value.trim() : "";
    if (query === asked) return;
    asked = query;
    if (!query) { found = new Set(); applyFilters(); return; }
    try {
      const response = await fetch(`${api}?limit=all&q=${encodeURIComponent(query)}`, { headers: { Accept: "application/json" } });
      const hits = response.ok ? await response.json() : [];
      if (asked !== query) return; // a newer search is under way
      found = new Set(hits.map((task) => task.id));
    } catch (error) {
      found = new Set();
    }
    applyFilters();
  }

  const ORDERS = {
    status: ["pending", "blocked", "in-progress", "in-review", "cancelled", "completed"],
    priority: ["low", "medium", "high", "critical"],
  };

  function sortBy(field, direction) {
    const header = table.querySelector(`[data-sort="${field}"]`);
    if (!header) return;
    table.querySelectorAll("th").forEach((th) => th.removeAttribute("aria-sort"));
    header.parentElement.setAttribute("aria-sort", direction);
    table.dataset.sortField = field;
    table.dataset.sortDir = direction;
    const order = ORDERS[field];
    const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: "base" });
    const key = (row) => {
      const value = field === "title" ? row.dataset.title : (row.dataset[field] || "");
      if (order) return value ? order.indexOf(value) : -1;
      return value;
    };
    const rows = Array.from(table.tBodies[0].rows).filter((row) => row.dataset.id);
    rows.sort((a, b) => {
      const left = key(a);
      const right = key(b);
      const cmp = typeof left === "number" ? left - right : collator.compare(left, right);
      return (direction === "descending" ? -cmp : cmp) || collator.compare(a.dataset.id, b.dataset.id);
    });
    rows.forEach((row) => table.tBodies[0].appendChild(row));
  }

  // A large table is paged by the server: the filters, the search and a sort ask it for
  // the page (the form's own GET), instead of hiding rows of the one page shown.
  const paged = Boolean(table && table.hasAttribute("data-paged"));
  let leaving;

  function askServer(delay) {
    clearTimeout(leaving);
    leaving = setTimeout(() => {
      const params = new URLSearchParams(new FormData(filters));
      for (const [name, value] of Array.from(params.entries())) if (!value) params.delete(name);
      const search = params.toString();
      location.assign(search ? `${location.pathname}?${search}` : location.pathname);
    }, delay);
  }

  if (paged && filters) {
    filters.addEventListener("input", (event) => askServer(event.target.matches("[data-search]") ? 400 : 0));
    filters.addEventListener("reset", () => { location.assign(location.pathname); });
    table.querySelectorAll("[data-sort]").forEach((button) => {
      button.addEventListener("click", () => {
        const field = button.dataset.sort;
        const current = new URLSearchParams(location.search).get("sort") || "";
        let sort = filters.querySelector('input[name="sort"]');
        if (!sort) {
          sort = document.createElement("input");
          sort.type = "hidden";
          sort.name = "sort";
          filters.appendChild(sort);
        }
        sort.value = current === field ? `-${field}` : field;
        askServer(0);
      });
    });
    table.tBodies[0].addEventListener("click", (event) => {
      const row = event.target.closest("tr[data-href]");
      if (row && !event.target.closest("a")) location.href = row.dataset.href;
    });
  }

  if (table && filters && !paged) {
    const params = new URLSearchParams(location.search);
    filters.querySelector("[data-search]").value = params.get("q") || "";
    filters.querySelectorAll("[data-filter]").forEach((el) => {
      const value = params.get(el.dataset.filter);
      if (value && Array.from(el.options).some((option) => option.value === value)) el.value = value;
    });
    const sort = params.get("sort");
    if (sort) sortBy(sort.replace(/^-/, ""), sort.startsWith("-") ? "descending" : "ascending");
    filters.addEventListener("input", () => { applyFilters(); searchSoon(); });
    filters.addEventListener("submit", (event) => event.preventDefault());
    filters.addEventListener("reset", () => setTimeout(() => { applyFilters(); searchBodies(); }));
    table.querySelectorAll("[data-sort]").forEach((button) => {
      button.addEventListener("click", () => {
        const field = button.dataset.sort;
        const ascending = table.dataset.sortField === field && table.dataset.sortDir === "ascending";
        sortBy(field, ascending ? "descending" : "ascending");
        applyFilters();
      });
    });
    table.tBodies[0].addEventListener("click", (event) => {
      const row = event.target.closest("tr[data-href]");
      if (row && !event.target.closest("a")) location.href = row.dataset.href;
    });
    applyFilters();
    searchBodies();
  }

  // ---- edit and create forms: sent as JSON; each field's error shown next to it ----
  // The edit form PUTs only the fields that changed; the create form POSTs those filled
  // in and opens the new task's page.
  const form = document.querySelector("[data-edit-form]");
  const createForm = document.querySelector("[data-create-form]");
  let dirty = false;

  function formValues(target) {
    const values = {};
    for (const el of target.elements) {
      if (!el.name) continue;
      values[el.name] = "list" in el.dataset
        ? el.value.split(",").map((item) => item.trim()).filter(Boolean)
        : el.value;
    }
    return values;
  }

  function showErrors(target, error) {
    const fields = (error.details && error.details.fields) || {};
    for (const [name, problem] of Object.entries(fields)) {
      const slot = target.querySelector(`[data-error-for="${name}"]`);
      if (slot) {
        slot.textContent = problem.message;
        slot.parentElement.classList.add("invalid");
      }
    }
    const status = target.querySelector("[data-form-status]");
    status.classList.add("bad");
    status.textContent = `Not saved: ${error.message || "error"}`;
    const first = Object.keys(fields)[0];
    if (first && target.elements[first]) target.elements[first].focus();
  }

  function wireForm(target, method, payload, saved) {
    const status = target.querySelector("[data-form-status]");
    target.addEventListener("input", () => { dirty = true; });
    target.addEventListener("submit", async (event) => {
      event.preventDefault();
      target.querySelectorAll("[data-error-for]").forEach((el) => {
        el.textContent = "";
        el.parentElement.classList.remove("invalid");
      });
      status.classList.remove("bad");
      const data = payload();
      if (!Object.keys(data).length) { status.textContent = "Nothing changed."; return; }
      status.textContent = "Saving…";
      let answer;
      try {
        const response = await fetch(target.dataset.action, {
          method,
          headers: { "Content-Type": "application/json", Accept: "application/json" },
          body: JSON.stringify(data),
        });
        answer = { ok: response.ok, data: await response.json() };
      } catch (error) {
        answer = { ok: false, data: { error: { message: String(error) } } };
      }
      if (!answer.ok) { showErrors(target, answer.data.error || {}); return; }
      dirty = false;
      status.textContent = "Saved.";
      saved(answer.data);
    });
  }

  if (form) {
    const initial = formValues(form);
    wireForm(form, "PUT", () => {
      const changes = {};
      for (const [name, value] of Object.entries(formValues(form))) {
        if (JSON.stringify(value) !== JSON.stringify(initial[name])) changes[name] = value;
      }
      return changes;
    }, () => location.reload());
  }

  if (createForm) {
    wireForm(createForm, "POST", () => {
      const values = {};
      for (const [name, value] of Object.entries(formValues(createForm))) {
        if (value.length) values[name] = value;
      }
      return values;
    }, (task) => { location.href = createForm.dataset.taskBase + encodeURIComponent(task.id); });
  }

  // ---- live reload: the server says when task files change on disk ----
  if (live && body.dataset.events && "EventSource" in window) {
    const badge = document.getElementById("live");
    const source = new EventSource(body.dataset.events);
    source.addEventListener("ready", () => {
      body.dataset.live = "connected";
      if (badge) badge.classList.remove("stale");
    });
    source.addEventListener("change", () => {
      if (!dirty) { location.reload(); return; }
      if (document.getElementById("reload-notice")) return;
      const notice = document.createElement("div");
      notice.id = "reload-notice";
      notice.className = "notice warn";
      notice.setAttribute("role", "status");
      notice.innerHTML = "Task files changed on disk. <button type=\"button\">Reload</button> (your edits will be lost)";
      notice.querySelector("button").addEventListener("click", () => location.reload());
      document.body.appendChild(notice);
    });
    source.addEventListener("error", () => {
      body.dataset.live = "lost";
      if (badge) badge.classList.add("stale");
    });
  }

  // ---- keyboard ----
  const help = document.getElementById("help");
  document.querySelector("[data-help]")?.addEventListener("click", () => help.showModal());
  document.addEventListener("keydown", (event) => {
    const owner = [form, createForm].find((target) => target && target.contains(event.target));
    if (owner && event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      owner.requestSubmit();
      return;
    }
    if (event.key === "Escape" && typing(event.target)) {
      const search = event.target.matches("[data-search]") ? event.target : null;
      if (search && search.value) {
        search.value = "";
        if (paged) askServer(0); else applyFilters();
      } else event.target.blur();
      return;
    }
    if (typing(event.target) || event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "?") { help.open ? help.close() : help.showModal(); return; }
    if (event.key === "/" && filters) {
      event.preventDefault();
      filters.querySelector("[data-search]").focus();
      return;
    }
    if (table && (event.key === "j" || event.key === "ArrowDown")) { event.preventDefault(); select(selected + 1); return; }
    if (table && (event.key === "k" || event.key === "ArrowUp")) { event.preventDefault(); select(Math.max(0, selected - 1)); return; }
    if (table && event.key === "Enter" && selected >= 0) {
      const row = visibleRows()[selected];
      if (row) location.href = row.dataset.href;
      return;
    }
    if (createForm && event.key === "c") {
      event.preventDefault();
      createForm.closest("details").open = true;
      createForm.elements.title.focus();
      return;
    }
    if (form && event.key === "e") { event.preventDefault(); form.querySelector("[name=status]").focus(); form.scrollIntoView(); return; }
    const nav = document.querySelector(`header nav a[data-key="${event.key}"]`);
    if (nav) location.href = nav.getAttribute("href");
  });
})();

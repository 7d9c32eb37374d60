/* The entity graph: cytoscape.js draws it; this file only maps kgmem's graph onto it.
 * Nodes are coloured by ontology branch (the top-level class an entity falls under),
 * asserted facts are solid arrows, inferred ones lighter, and pages that share atomic
 * memories are joined by dashed lines. Focusing a node fades everything but its two-hop
 * neighbourhood and fits the view to it; nothing is removed from the graph. */
"use strict";

(function () {
  const PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948",
    "#b07aa1", "#ff9da7", "#9c755f", "#86bcb6", "#d37295", "#a0cbe8", "#8cd17d", "#bab0ac"];
  const OTHER = "#c7c7c7";
  const BIG = 250; // above this many nodes: a linear-time layout and lighter drawing

  let cy = null;
  let lit = null; // the focused neighbourhood (null: nothing faded)

  function colours(nodes) {
    const counts = new Map();
    for (const n of nodes) {
      const key = n.branch || "";
      const seen = counts.get(key) || { label: n.branchLabel || "untyped", count: 0 };
      seen.count += 1;
      counts.set(key, seen);
    }
    const ranked = [...counts.entries()].sort((a, b) => b[1].count - a[1].count || a[1].label.localeCompare(b[1].label));
    const colour = new Map();
    const legend = [];
    ranked.forEach(([key, info], i) => {
      const c = key && i < PALETTE.length ? PALETTE[i] : OTHER;
      colour.set(key, c);
      legend.push({ label: key ? info.label : "untyped", colour: c, count: info.count, branch: key });
    });
    return { colour, legend };
  }

  function style(big) {
    return [
      { selector: "node", style: {
        "background-color": "data(colour)", "label": "data(label)", "font-size": 10,
        "min-zoomed-font-size": big ? 9 : 6, "text-valign": "bottom", "text-margin-y": 3,
        "width": "mapData(weight, 0, 20, 14, 34)", "height": "mapData(weight, 0, 20, 14, 34)",
        "border-width": 1, "border-color": "#000", "border-opacity": 0.2 } },
      { selector: "edge", style: {
        "width": 1.4, "line-color": "#6b6b6b", "target-arrow-color": "#6b6b6b",
        "target-arrow-shape": "triangle", "arrow-scale": 0.8,
        "curve-style": big ? "haystack" : "bezier", "opacity": 0.85 } },
      { selector: "edge.inferred", style: { "line-color": "#c4c4c4", "target-arrow-color": "#c4c4c4", "opacity": 0.7 } },
      { selector: "edge.link", style: { "line-style": "dashed", "line-color": "#8a8a8a", "target-arrow-shape": "none", "width": 1 } },
      { selector: "edge.labelled", style: { "label": "data(label)", "font-size": 8, "text-rotation": "autorotate", "color": "#555" } },
      { selector: ".faded", style: { "opacity": 0.12, "text-opacity": 0 } },
      { selector: "node.focus", style: { "border-width": 4, "border-color": "#1f5fbf", "font-weight": "bold", "font-size": 12, "z-index": 10 } },
      { selector: "node.near", style: { "z-index": 9 } },
    ];
  }

  function elements(view, colour) {
    const weight = new Map(view.nodes.map((n) => [n.id, n.memories]));
    const els = view.nodes.map((n) => ({ group: "nodes", data: {
      id: n.id, label: n.name, colour: colour.get(n.branch || "") || OTHER,
      branch: n.branchLabel || "untyped", weight: Math.min(weight.get(n.id) || 0, 20) } }));
    const id = (i) => view.nodes[i].id; // edges and links name their ends by index
    view.edges.forEach((e, i) => els.push({ group: "edges", classes: e.inferred ? "inferred" : "asserted",
      data: { id: "r" + i, source: id(e.source), target: id(e.target), label: view.predicates[e.predicate].label } }));
    view.links.forEach((l, i) => els.push({ group: "edges", classes: "link",
      data: { id: "l" + i, source: id(l.source), target: id(l.target), shared: l.shared } }));
    return els;
  }

  function layout(big) {
    if (big) {
      return { name: "concentric", animate: false, concentric: (n) => n.degree(), levelWidth: () => 4,
        minNodeSpacing: 6, avoidOverlap: false };
    }
    return { name: "cose", animate: false, randomize: false, numIter: 800, nodeRepulsion: () => 9000,
      idealEdgeLength: () => 70, fit: true, padding: 30 };
  }

  function draw(container, view, onSelect) {
    if (typeof window.cytoscape !== "function") {
      throw new Error("the graph library did not load: run `make serve` to install it");
    }
    if (cy) { cy.destroy(); }
    lit = null;
    const big = view.nodes.length > BIG;
    const { colour, legend } = colours(view.nodes);
    cy = window.cytoscape({
      container, elements: elements(view, colour), style: style(big), layout: layout(big),
      minZoom: 0.02, maxZoom: 2,
      hideEdgesOnViewport: big, textureOnViewport: big, motionBlur: false, pixelRatio: big ? 1 : "auto",
    });
    cy.on("tap", "node", (event) => onSelect(event.target.id()));
    return legend;
  }

  function focus(id) {
    if (!cy) { return false; }
    const node = cy.getElementById(id);
    if (node.empty()) { return false; }
    const hood = node.closedNeighborhood().closedNeighborhood();
    cy.batch(() => { // restyle only what changes: at 20k elements a restyle of all costs ~0.6 s
      if (lit === null) {
        cy.elements().addClass("faded");
      } else {
        lit.difference(hood).addClass("faded");
        lit.removeClass("focus near labelled");
      }
      hood.removeClass("faded");
      hood.nodes().addClass("near");
      hood.edges().not(".link").addClass("labelled");
      node.addClass("focus");
    });
    lit = hood;
    cy.stop();
    cy.animate({ fit: { eles: hood, padding: 60 } }, { duration: 250 });
    return true;
  }

  function fit() {
    if (!cy) { return; }
    cy.elements().removeClass("faded focus near labelled");
    lit = null;
    cy.fit(undefined, 30);
  }

  function focused() {
    if (!cy) { return null; }
    const hood = cy.elements().not(".faded");
    return { nodes: hood.nodes().map((n) => n.id()), focus: cy.nodes(".focus").map((n) => n.id()) };
  }

  window.KgGraph = { draw, focus, fit, focused, instance: () => cy };
})();

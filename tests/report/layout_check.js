// Measures the report's plots as Chromium lays them out (tests/e2e/report_layout.sh
// appends this to a copy of a report and reads the DOM it leaves): for each <svg>,
// every box of its legend (the group, its frame, each entry) against every element
// drawn outside the legend (markers, bars, lines, labels, axes, the frame), the
// legend's entries against its frame and each other (their text was measured
// before it was drawn), and every element against the picture's own box
// (nothing drawn off the picture).
// The result is JSON in <pre id='layout-result'>.
(function () {
  var TOL = 0.5; // px: boxes that only touch do not overlap
  function box(el) {
    var r = el.getBoundingClientRect();
    return {l: r.left, t: r.top, r: r.right, b: r.bottom};
  }
  function overlap(a, b) {
    return Math.min(a.r, b.r) - Math.max(a.l, b.l) > TOL && Math.min(a.b, b.b) - Math.max(a.t, b.t) > TOL;
  }
  function inside(a, outer) {
    return a.l >= outer.l - 1 && a.t >= outer.t - 1 && a.r <= outer.r + 1 && a.b <= outer.b + 1;
  }
  function describe(el) {
    var group = el.parentNode.tagName === 'g' ? el.parentNode : null; // a marker is a <g> with its <title>
    var cls = el.getAttribute('class') || (group && group.getAttribute('class')) || '';
    var tip = el.querySelector(':scope > title') || (group && group.querySelector(':scope > title'));
    return el.tagName + (cls ? '.' + cls.replace(/ /g, '.') : '') + (tip ? ' "' + tip.textContent + '"' : '') +
           (el.tagName === 'text' ? ' "' + el.textContent + '"' : '');
  }
  var DRAWN = 'circle, rect, path, text, line, polyline, polygon, ellipse';
  var out = {svgs: 0, legends: 0, entries: 0, elements: 0, failures: []};
  document.querySelectorAll('svg').forEach(function (svg, n) {
    out.svgs++;
    var title = svg.querySelector(':scope > title');
    var name = '#' + n + ' "' + (title ? title.textContent : '') + '"';
    var pic = box(svg);
    var legends = Array.prototype.slice.call(svg.querySelectorAll('g.legend'));
    var legendBoxes = [];
    legends.forEach(function (g) {
      out.legends++;
      legendBoxes.push({el: g, b: box(g)});
      var frame = g.querySelector('rect.bg'), parts = [];
      g.querySelectorAll(DRAWN).forEach(function (e) {
        out.entries++;
        legendBoxes.push({el: e, b: box(e)});
        if (e !== frame && !e.closest('defs')) parts.push({el: e, b: box(e)});
      });
      // Its entries were measured before they were drawn: each inside the frame, none on another.
      parts.forEach(function (a, i) {
        if (frame && !inside(a.b, box(frame))) out.failures.push(name + ': legend entry ' + describe(a.el) + ' sticks out of its frame');
        for (var j = i + 1; j < parts.length; j++)
          if (overlap(a.b, parts[j].b))
            out.failures.push(name + ': legend entries ' + describe(a.el) + ' and ' + describe(parts[j].el) + ' overlap');
      });
    });
    svg.querySelectorAll(DRAWN).forEach(function (e) {
      if (e.closest('defs') || e.closest('g.legend')) return;
      out.elements++;
      var b = box(e);
      if (b.r - b.l <= 0 && b.b - b.t <= 0) return; // nothing drawn
      var near = {l: b.l - 1, t: b.t - 1, r: b.r + 1, b: b.b + 1}; // a line has no height: within 1 px counts
      if (!inside(b, pic)) out.failures.push(name + ': ' + describe(e) + ' is drawn off the picture');
      for (var i = 0; i < legendBoxes.length; i++)
        if (overlap(near, legendBoxes[i].b)) {
          out.failures.push(name + ': the legend (' + describe(legendBoxes[i].el) + ') covers ' + describe(e));
          break;
        }
    });
    legendBoxes.forEach(function (l) {
      if (!inside(l.b, pic)) out.failures.push(name + ': legend ' + describe(l.el) + ' is drawn off the picture');
    });
  });
  var pre = document.createElement('pre');
  pre.id = 'layout-result';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();

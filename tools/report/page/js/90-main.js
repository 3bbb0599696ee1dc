/* Entry point: parse the embedded JSON (a data block, never executed) and build the page. */
'use strict';
(function () {
  var t0 = performance.now();
  var node = document.getElementById('jager-data');
  var data;
  try {
    data = JSON.parse(node.textContent);
  } catch (e) {
    document.getElementById('findings-list').appendChild(J.el('li', 'empty', 'The report data could not be read: ' + e.message));
    throw e;
  }
  J.data = data;
  J.renderOverview(data);
  J.renderFindings(data);
  J.renderAllocators(data);
  J.renderAttrs(data);
  J.renderMethods(data);
  J.timeline = new J.Timeline(data);
  J.flame = new J.Flame(data);
  if (data.baseline) {   /* the differential page: colour by change, list what moved */
    J.flame.diff = new J.Diff(data, J.flame);
    J.flame.draw();
    J.flame.diff.render();
  }
  J.samples = new J.Samples(data);
  J.table = new J.SiteTable(data);
  var foot = document.getElementById('foot');
  foot.textContent = (data.generator || 'jager') + ' · rendered in ' + Math.round(performance.now() - t0) + ' ms';
  /* for tests and measurements: when the page became interactive */
  window.__jagerReady = performance.now();
  document.body.dataset.ready = '1';
})();

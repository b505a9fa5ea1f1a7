/** Hand a downloaded file to the browser (the export needs the auth header, so no plain link). */
export function saveBlob(blob: Blob, filename: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** Open a printable HTML report in a new tab. */
export function openHtml(html: string): void {
  const url = URL.createObjectURL(new Blob([html], { type: 'text/html;charset=utf-8' }));
  const w = window.open(url, '_blank');
  if (!w) saveBlob(new Blob([html], { type: 'text/html;charset=utf-8' }), 'zhiwen-report.html');
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

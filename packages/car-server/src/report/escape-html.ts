/** Text made safe to place in HTML text or a quoted attribute: the five characters HTML gives meaning to, as entities. */
export function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");
}

/** The preview pane's tabs: plain data, so the views can name them without loading the emitters. */

/** The preview tabs, in Tab order. */
export const PREVIEW_TABS = ['yaml', 'json', 'commands'] as const;
/** One preview tab. */
export type PreviewTab = (typeof PREVIEW_TABS)[number];

/** The next tab after `tab`. */
export function nextTab(tab: PreviewTab): PreviewTab {
  return PREVIEW_TABS[(PREVIEW_TABS.indexOf(tab) + 1) % PREVIEW_TABS.length]!;
}

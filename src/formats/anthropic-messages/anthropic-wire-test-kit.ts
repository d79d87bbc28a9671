/** Test-only builders of Anthropic wire blocks: each returns the block written out, nothing more. */

/** An image block whose source is base64 data: `{ type: 'image', source: { type: 'base64', media_type, data } }`, plus `more`. */
export const base64Image = (mediaType: string, data: string, more: Record<string, unknown> = {}) => ({
  type: 'image',
  source: { type: 'base64', media_type: mediaType, data },
  ...more,
});

/** An image block whose source is a URL: `{ type: 'image', source: { type: 'url', url } }`. */
export const urlImage = (url: string) => ({ type: 'image', source: { type: 'url', url } });

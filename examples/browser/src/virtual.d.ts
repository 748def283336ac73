declare module 'virtual:mnist-digits' {
  /** URL of the gzipped digits: count·784 pixel bytes, then count label bytes. */
  const url: string;
  export default url;
  /** How many digits the file holds. */
  export const count: number;
}

declare module 'virtual:moby-dick' {
  /** URL of the gzipped start of Moby Dick, UTF-8. */
  const url: string;
  export default url;
  /** The length of the text in UTF-8 bytes. */
  export const bytes: number;
  /** The length of the whole book, in UTF-16 code units, for saying how much of it the page has. */
  export const bookChars: number;
}

declare module 'virtual:mnist-digits' {
  /** URL of the gzipped digits: count·784 pixel bytes, then count label bytes. */
  const url: string;
  export default url;
  export const count: number;
}

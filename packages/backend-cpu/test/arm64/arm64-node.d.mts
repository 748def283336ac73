// Types of arm64-node.mjs (plain JavaScript: it also runs from the command line).
/** The npm package and version the arm64 Node comes from. */
export declare const ARM64_NODE_PACKAGE: string;
/** The arm64 node's path; fetches it when it is not cached yet. Throws, saying why, when it cannot be had. */
export declare function arm64Node(): string;

/** This package's version (`package.json`; a test keeps the two equal). */
export const VERSION = "0.2.0";

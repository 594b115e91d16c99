/** Vite bundles imported stylesheets; the type checker only needs to know they exist. */
declare module '*.css';

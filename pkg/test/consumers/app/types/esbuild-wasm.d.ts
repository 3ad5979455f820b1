// What the package README tells a TypeScript user of esbuild's file loader to declare:
// `--loader:.wasm=file` turns a .wasm import into the file's URL.
declare module '*.wasm' {
  const url: string;
  export default url;
}

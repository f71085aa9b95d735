import ts from "typescript";
const file = process.argv[2];
const program = ts.createProgram([file], { allowImportingTsExtensions: true, noEmit: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022 });
const c = program.getTypeChecker();
const sym = c.getSymbolAtLocation(program.getSourceFile(file)!)!;
const names = c.getExportsOfModule(sym).map((s) => s.name).sort();
console.log(names.length); if (process.argv[3]) console.log(names.join(" "));

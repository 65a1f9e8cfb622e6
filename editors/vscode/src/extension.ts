// The only code in the extension: VS Code cannot read a setting from a declarative
// `program`, so a descriptor factory chooses the adapter binary at launch time.
import * as vscode from 'vscode';
import { resolveAdapter } from './adapterPath';

class NeuralAdapterFactory implements vscode.DebugAdapterDescriptorFactory {
  constructor(private readonly extensionPath: string) {}

  createDebugAdapterDescriptor(session: vscode.DebugSession): vscode.ProviderResult<vscode.DebugAdapterDescriptor> {
    const configured = vscode.workspace.getConfiguration('neural', session.workspaceFolder).get<string>('adapterPath', '');
    const found = resolveAdapter({
      configured,
      extensionPath: this.extensionPath,
      baseDir: session.workspaceFolder?.uri.fsPath,
      envPath: process.env.PATH,
    });
    if (!found.ok) {
      // VS Code shows this message to the user and does not start the session.
      throw new Error(found.message);
    }
    return new vscode.DebugAdapterExecutable(found.path, []);
  }
}

export function activate(context: vscode.ExtensionContext): void {
  context.subscriptions.push(
    vscode.debug.registerDebugAdapterDescriptorFactory('neural', new NeuralAdapterFactory(context.extensionPath)),
  );
}

export function deactivate(): void {}

// The extension's code: VS Code cannot read a setting from a declarative `program`,
// so a descriptor factory chooses the adapter binary at launch time; and the command
// that asks the adapter which inputs give the current state.
import * as vscode from 'vscode';
import { resolveAdapter } from './adapterPath';
import { Candidate, rows } from './inputs';

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
    const args = vscode.workspace.getConfiguration('neural', session.workspaceFolder).get<string[]>('adapterArgs', []);
    return new vscode.DebugAdapterExecutable(found.path, args);
  }
}

/** Asks the stopped neural session for candidate calls; picking one copies it. */
async function whichInputs(): Promise<void> {
  const session = vscode.debug.activeDebugSession;
  if (!session || session.type !== 'neural') {
    vscode.window.showWarningMessage('Which inputs give this? needs a stopped Neural Python Debugger session.');
    return;
  }
  let candidates: Candidate[];
  try {
    const body = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'Asking the model which inputs give this state…' },
      () => session.customRequest('inverseCall', { count: 5 }),
    );
    candidates = body.candidates;
  } catch (error) {
    vscode.window.showErrorMessage(`Which inputs give this? ${error instanceof Error ? error.message : error}`);
    return;
  }
  const picked = await vscode.window.showQuickPick(rows(candidates), {
    title: 'Which inputs give this state? (pick one to copy the call)',
  });
  if (picked?.call) {
    await vscode.env.clipboard.writeText(picked.call);
    vscode.window.showInformationMessage(`Copied ${picked.call}: paste it as the "call" of a launch configuration to debug it.`);
  }
}

export function activate(context: vscode.ExtensionContext): void {
  context.subscriptions.push(
    vscode.debug.registerDebugAdapterDescriptorFactory('neural', new NeuralAdapterFactory(context.extensionPath)),
    vscode.commands.registerCommand('neural.whichInputs', whichInputs),
  );
}

export function deactivate(): void {}

import { PageHeader } from '../../ui.js';
import { Operator } from './Operator.js';
import { Password } from './Password.js';
import { Plan } from './Plan.js';
import { Profile } from './Profile.js';
import { SingleSignOn } from './SingleSignOn.js';
import { TwoFactor } from './TwoFactor.js';
import { WorkspaceName } from './WorkspaceName.js';

export function SettingsPage() {
  return (
    <>
      <PageHeader title="Settings" />
      <div class="settings-grid">
        <Profile />
        <Password />
        <TwoFactor />
        <WorkspaceName />
        <Plan />
        <Operator />
        <SingleSignOn />
      </div>
    </>
  );
}

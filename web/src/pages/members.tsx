import { useState } from 'preact/hooks';
import { api, type SessionInfo } from '../api.ts';
import { ConfirmButton } from '../components/confirm-button.tsx';
import { FieldError, FormError, invalidProps, Load, useAction, useApi } from '../components/states.tsx';
import { when } from '../money.ts';

interface Member {
  address: string;
  role: 'owner' | 'member';
  added_at: string;
  added_by: string;
}

function RemoveButton({ member, onRemoved }: { member: Member; onRemoved: () => void }) {
  return (
    <ConfirmButton
      label="Remove"
      verb="remove"
      subject={member.address}
      warning="Remove this member? Their sessions end at once."
      action={async () => {
        await api('DELETE', `/members/${member.address}`);
        onRemoved();
      }}
    />
  );
}

export function MembersPage({ session }: { session: SessionInfo }) {
  const loaded = useApi<{ data: Member[] }>('/members');
  const [address, setAddress] = useState('');
  const action = useAction();
  const owner = session.role === 'owner';
  return (
    <section aria-labelledby="members-title">
      <h1 id="members-title">Members</h1>
      <p>Members have the owner's rights except managing members. The wallet address is the identity: there are no passwords.</p>
      {owner ? (
        <form
          class="panel"
          onSubmit={(event) => {
            event.preventDefault();
            action.run(async () => {
              await api('POST', '/members', { address: address.trim() });
              setAddress('');
              loaded.reload();
            });
          }}
        >
          <h2>Add a member</h2>
          <label>
            Wallet address
            <input
              required
              value={address}
              onInput={(event) => setAddress((event.target as HTMLInputElement).value)}
              placeholder="0x…"
              pattern="^0x[0-9a-fA-F]{40}$"
              {...invalidProps('member-address-error', action.fieldError('address'))}
            />
            <FieldError id="member-address-error" error={action.fieldError('address')} />
          </label>
          <FormError error={action.formError(['address'])} />
          <button type="submit" disabled={action.busy}>
            Add member
          </button>
        </form>
      ) : (
        <p class="notice">Only the owner can add or remove members.</p>
      )}
      <Load loaded={loaded} what="members">
        {({ data }) => (
          <div class="table-wrap">
            <table class="stack">
              <caption>Owner and members</caption>
              <thead>
                <tr>
                  <th scope="col">Address</th>
                  <th scope="col">Role</th>
                  <th scope="col">Added</th>
                  <th scope="col">
                    <span class="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {data.map((member) => (
                  <tr key={member.address}>
                    <td data-label="Address">
                      <code class="address">{member.address}</code>
                    </td>
                    <td data-label="Role">{member.role}</td>
                    <td data-label="Added">
                      {when(member.added_at)} by <code class="address">{member.added_by}</code>
                    </td>
                    <td data-label="Actions">{owner && member.role !== 'owner' && <RemoveButton member={member} onRemoved={loaded.reload} />}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Load>
    </section>
  );
}

import { useState } from 'react';
import { Alert, Button, Card, Form, Input, Typography } from 'antd';
import { KeyOutlined, TranslationOutlined } from '@ant-design/icons';
import { useNavigate, useSearchParams } from 'react-router-dom';
import { useAuth } from '../auth';
import { useI18n } from '../i18n/I18nProvider';
import { errorMessage } from '../components/States';

export function SignIn() {
  const { t, toggle } = useI18n();
  const { signIn } = useAuth();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  const submit = async ({ key }: { key: string }) => {
    setBusy(true);
    setError(undefined);
    try {
      await signIn(key);
      const next = params.get('next');
      navigate(next && next.startsWith('/') && !next.startsWith('/signin') ? next : '/', { replace: true });
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div style={{ minHeight: '100vh', display: 'flex', alignItems: 'center', justifyContent: 'center', background: '#f0f2f5' }}>
      <Card style={{ width: 440 }}>
        <div style={{ display: 'flex', justifyContent: 'space-between', alignItems: 'center' }}>
          <Typography.Title level={3} style={{ margin: 0 }}>
            {t('signin.title')}
          </Typography.Title>
          <Button type="text" icon={<TranslationOutlined />} onClick={toggle} data-testid="lang-toggle">
            {t('header.switchLang')}
          </Button>
        </div>
        <Typography.Paragraph type="secondary" style={{ marginTop: 12 }}>
          {t('signin.intro')}
        </Typography.Paragraph>
        {error !== undefined && (
          <Alert type="error" showIcon message={errorMessage(t, error)} style={{ marginBottom: 16 }} data-testid="signin-error" />
        )}
        <Form layout="vertical" onFinish={submit} requiredMark={false}>
          <Form.Item
            name="key"
            label={t('signin.key')}
            rules={[
              { required: true, whitespace: true, message: t('signin.keyRequired') },
              { pattern: /^\s*zw_\S+\s*$/, message: t('signin.keyFormat') },
            ]}
          >
            <Input.Password prefix={<KeyOutlined />} placeholder={t('signin.keyPlaceholder')} autoComplete="off" data-testid="key-input" />
          </Form.Item>
          <Button type="primary" htmlType="submit" block loading={busy} data-testid="sign-in">
            {t('signin.submit')}
          </Button>
        </Form>
        <Typography.Paragraph type="secondary" style={{ marginTop: 16, marginBottom: 0, fontSize: 12 }}>
          {t('signin.help')}
        </Typography.Paragraph>
      </Card>
    </div>
  );
}
